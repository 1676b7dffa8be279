// What the web UI is tested on: the mixed workload (a priced break beside
// unpriced ones, a usage record waiting), a session whose tools changed three
// ways at once (added, moved, schema changed), a session three days old (outside the
// default range, inside 7d), one whose thinking budget changed, and one
// whose id is markup.
import { hashString } from '../../src/core/hash.js';
import { SEED_TOOLS, toWire, tools, turn, usage } from '../core/scenario.js';
import { mixedWorkload, WAITING_USAGE } from '../e2e/mixed-workload.js';

export const TOOLS_SESSION = 'sess_tools';
export const OLD_SESSION = 'sess_three_days_ago';
export const MARKUP_SESSION = '<img src=x onerror=alert(1)>"\'';
/** The break in TOOLS_SESSION: the last two seed tools swapped, one tool's schema changed, one tool added at the end. */
export const MOVED_TOOLS = SEED_TOOLS.slice(-2);
export const CHANGED_TOOL = SEED_TOOLS[1]!;
export const ADDED_TOOL = 'web_fetch';
export const UNCHANGED_TOOL = SEED_TOOLS[0]!;
/** Its thinking budget doubled, its tool choice the same. */
export const PARAMS_SESSION = 'sess_params';

const DAY = 86_400_000;

export function uiWorkload(now: number): unknown[] {
  const t0 = now - 3_600_000;
  const changed = tools([...SEED_TOOLS.slice(0, -2), ...[...MOVED_TOOLS].reverse(), ADDED_TOOL], { [CHANGED_TOOL]: 2 });
  return [
    ...mixedWorkload(t0),
    WAITING_USAGE,
    ...[
      turn('t1', { sessionId: TOOLS_SESSION, ts: t0, endTs: t0 + 4_000, usage: usage(0, 48_900) }),
      turn('t2', { sessionId: TOOLS_SESSION, ts: t0 + 20_000, endTs: t0 + 24_000, usage: usage(48_900, 300) }),
      turn('t3', { sessionId: TOOLS_SESSION, ts: t0 + 40_000, endTs: t0 + 44_000, tools: changed, usage: usage(0, 49_500) }),
      turn('t4', { sessionId: TOOLS_SESSION, agentId: 'subagent-1', ts: t0 + 50_000, endTs: t0 + 54_000, usage: usage(0, 20_000) }),
      turn('t5', { sessionId: TOOLS_SESSION, agentId: 'subagent-1', ts: t0 + 60_000, endTs: t0 + 64_000, usage: usage(20_000, 100) }),
      turn('q1', { sessionId: PARAMS_SESSION, ts: t0, endTs: t0 + 4_000, thinking: { type: 'enabled', budget_tokens: 8_000 }, toolChoice: { type: 'auto' }, usage: usage(0, 40_000) }),
      turn('q2', { sessionId: PARAMS_SESSION, ts: t0 + 30_000, endTs: t0 + 34_000, thinking: { type: 'enabled', budget_tokens: 16_000 }, toolChoice: { type: 'auto' }, usage: usage(0, 40_000) }),
      turn('o1', { sessionId: OLD_SESSION, ts: now - 3 * DAY, endTs: now - 3 * DAY + 4_000, usage: usage(0, 30_000) }),
      turn('o2', { sessionId: OLD_SESSION, ts: now - 3 * DAY + 10_000, endTs: now - 3 * DAY + 14_000, systemBlockHashes: [hashString('billing'), hashString('v2')], usage: usage(0, 30_000) }),
      turn('x1', { sessionId: MARKUP_SESSION, ts: t0 + 5_000, endTs: t0 + 9_000, usage: usage(0, 10_000) }),
      turn('x2', { sessionId: MARKUP_SESSION, ts: t0 + 15_000, endTs: t0 + 19_000, model: 'claude-haiku-4-5', usage: usage(0, 10_000) }),
    ].map(toWire),
  ];
}
