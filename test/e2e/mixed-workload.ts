// A workload whose aggregates cannot hide what they leave out: a break with
// a known price beside breaks of a model with none (SPEC §4.10), turns that
// reported cache usage beside turns that reported no cache field, in the same
// session and minute (SPEC §5), and a usage record that names no session
// (SPEC §4.11). Times are relative to `t0`, so that a real server's default
// range (the last 24 h) holds them.
import { hashString } from '../../src/core/hash.js';
import { SEED_TOOLS, toWire, tools, turn, usage } from '../core/scenario.js';

/** No price database knows this model. */
export const UNPRICED_MODEL = 'cachebreak-test-private-model';
/** The one priced break: 48,900 missed at (5m write − read) = $3.45 per MTok. */
export const PRICED_COST_USD = 0.168705;
export const UNREPORTED_INPUT = 5_000 + 7_000;

type Wire = Record<string, unknown>;

/** A turn whose usage carries no cache field: `unreported`, outside the cache rate. */
function unreported(requestId: string, ts: number, input: number): Wire {
  return {
    type: 'turn',
    requestId,
    sessionId: 'sess_priced',
    agentId: 'proxy',
    ts: new Date(ts).toISOString(),
    provider: 'openrouter',
    model: 'anthropic/claude-sonnet-4.5',
    uncachedInputTokens: input,
    outputTokens: 40,
  };
}

export function mixedWorkload(t0: number): Wire[] {
  const at = (ms: number) => ({ ts: t0 + ms, endTs: t0 + ms + 4_000 });
  const reversed = tools([...SEED_TOOLS].reverse());
  return [
    // A priced break: the tools re-ordered.
    ...[
      turn('p1', { sessionId: 'sess_priced', ...at(0), usage: usage(0, 48_900) }),
      turn('p2', { sessionId: 'sess_priced', ...at(10_000), tools: reversed, usage: usage(0, 48_900) }),
      turn('p3', { sessionId: 'sess_priced', ...at(20_000), tools: reversed, usage: usage(48_900, 200) }),
    ].map(toWire),
    unreported('p_proxy_1', t0 + 5_000, 5_000),
    unreported('p_proxy_2', t0 + 15_000, 7_000),
    // Two breaks of a model with no known price: the system prompt changed twice.
    ...[
      turn('u1', { sessionId: 'sess_unpriced', model: UNPRICED_MODEL, ...at(0), usage: usage(0, 30_000) }),
      turn('u2', { sessionId: 'sess_unpriced', model: UNPRICED_MODEL, ...at(10_000), systemBlockHashes: [hashString('billing'), hashString('v2')], usage: usage(0, 30_000) }),
      turn('u3', { sessionId: 'sess_unpriced', model: UNPRICED_MODEL, ...at(20_000), systemBlockHashes: [hashString('billing'), hashString('v3')], usage: usage(0, 30_000) }),
    ].map(toWire),
  ];
}

/** A usage record naming no session: it waits for its snapshot. */
export const WAITING_USAGE: Wire = { type: 'usage', requestId: 'w1', uncachedInputTokens: 10, cacheReadInputTokens: 0 };

/** The snapshot that places WAITING_USAGE. */
export function waitingSnapshot(t0: number): Wire {
  return { type: 'snapshot', requestId: 'w1', sessionId: 'sess_waiting', ts: new Date(t0 + 30_000).toISOString(), model: 'claude-sonnet-4-5' };
}
