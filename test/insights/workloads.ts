// Crafted workloads whose insights are known in advance: every figure the
// tests expect is computed by hand from these turns and the price table.
import { hashString } from '../../src/core/hash.js';
import type { CacheEvent } from '../../src/core/types.js';
import type { ExternalBreak } from '../../src/store/store.js';
import { MINUTE, SEED_TOOLS, T0, tools, turn, usage } from '../core/scenario.js';

const SYSTEM = (k: number, version: string) => {
  const blocks = [hashString('billing'), hashString('You are a coding agent.')];
  blocks[k] = hashString(`block ${k} ${version}`);
  return blocks;
};

/**
 * Avoidable breaks, on claude-sonnet-4-5 ($3 input, $0.30 read, $3.75 5m write per MTok):
 * - sess_order: o2 sends the same tools reversed: tools_order_changed, 48,900 missed.
 * - sess_date: system block 1 changes at d2 and again at d3 (volatile: 2 changes): two system_changed breaks.
 * - sess_edit: system block 0 changes once (e2): an edit, not counted.
 * - sess_reach: r2 adds a step of 12 parallel tool calls (25 content blocks in 2 messages) and marks only its
 *   last message: the lookup cannot reach r1's breakpoint, breakpoint_lookback_exceeded: counted, "25 blocks".
 * - sess_marker: the system marker moves from system:1 to system:0 (m2): markers are not part of the cache key,
 *   so m2's miss is the provider's, not counted.
 * - sess_ttl: the markers stay, their TTL goes from 5m to 1h (t2): a setting, not counted.
 * Every break misses the 48,900 tokens its baseline wrote.
 */
const REACH = Array.from({ length: 5 }, (_, i) => hashString(`reach ${i}`));

export function avoidableWorkload(): CacheEvent[] {
  const at = (n: number) => n * MINUTE;
  return [
    turn('o1', { sessionId: 'sess_order', at: at(0) }),
    turn('o2', { sessionId: 'sess_order', at: at(1), tools: tools([...SEED_TOOLS].reverse()) }),
    turn('d1', { sessionId: 'sess_date', at: at(0), systemBlockHashes: SYSTEM(1, 'monday') }),
    turn('d2', { sessionId: 'sess_date', at: at(1), systemBlockHashes: SYSTEM(1, 'tuesday') }),
    turn('d3', { sessionId: 'sess_date', at: at(2), systemBlockHashes: SYSTEM(1, 'wednesday') }),
    turn('e1', { sessionId: 'sess_edit', at: at(0) }),
    turn('e2', { sessionId: 'sess_edit', at: at(1), systemBlockHashes: SYSTEM(0, 'edited') }),
    turn('r1', { sessionId: 'sess_reach', at: at(0), messageHashes: REACH.slice(0, 3), cacheControl: { enabled: true, markers: ['system:1', 'messages:2'] } }),
    turn('r2', {
      sessionId: 'sess_reach',
      at: at(1),
      messageHashes: REACH,
      messageBlockCounts: [1, 1, 1, 13, 12],
      cacheControl: { enabled: true, markers: ['system:1', 'messages:4'] },
    }),
    turn('m1', { sessionId: 'sess_marker', at: at(0) }),
    turn('m2', {
      sessionId: 'sess_marker',
      at: at(1),
      cacheControl: { enabled: true, ttl: '5m', scope: 'tools+system+messages', markers: ['system:0', 'messages:-1'] },
    }),
    turn('t1', { sessionId: 'sess_ttl', at: at(0) }),
    turn('t2', {
      sessionId: 'sess_ttl',
      at: at(1),
      cacheControl: { enabled: true, ttl: '1h', scope: 'tools+system+messages', markers: ['system:1@1h', 'messages:-1@1h'] },
      usage: usage(0, 48_900, 120, 48_900),
    }),
  ];
}

/**
 * TTL advice, on claude-sonnet-4-5 ($0.30 read, $3.75 5m write, $6 1h write per MTok):
 * - sess_short (main, 5m): s1 writes 48,900; s2 2 min later reads it; s3 comes 20 min later
 *   and writes 50,500 again; s4 2 min later reads. Stake at the 20-min gap: min(49,900, 50,500)
 *   = 49,900, all rewritten; written 101,000. 1 h saves 49,900 × 3.45 − 51,100 × 2.25 = $0.05718.
 * - sess_long (reviewer, 1h): three turns 2 min apart write 50,900 at 1 h, no gap over 5 min:
 *   1 h costs 50,900 × 2.25 = $0.114525 more than 5 m would have.
 * - sess_unpriced: a model with no known price writes: counted, never priced.
 */
export function ttlWorkload(): CacheEvent[] {
  const hour = { enabled: true, ttl: '1h', scope: 'tools+system+messages', markers: ['system:1@1h', 'messages:-1@1h'] };
  return [
    turn('s1', { sessionId: 'sess_short', at: 0, usage: usage(0, 48_900) }),
    turn('s2', { sessionId: 'sess_short', at: 2 * MINUTE, usage: usage(48_900, 1_000) }),
    turn('s3', { sessionId: 'sess_short', at: 22 * MINUTE, usage: usage(0, 50_500) }),
    turn('s4', { sessionId: 'sess_short', at: 24 * MINUTE, usage: usage(50_500, 600) }),
    turn('l1', { sessionId: 'sess_long', agentId: 'reviewer', at: 0, cacheControl: hour, usage: usage(0, 48_900, 120, 48_900) }),
    turn('l2', { sessionId: 'sess_long', agentId: 'reviewer', at: 2 * MINUTE, cacheControl: hour, usage: usage(48_900, 1_000, 120, 1_000) }),
    turn('l3', { sessionId: 'sess_long', agentId: 'reviewer', at: 4 * MINUTE, cacheControl: hour, usage: usage(49_900, 1_000, 120, 1_000) }),
    turn('x1', { sessionId: 'sess_unpriced', at: 0, model: 'house-model-7', usage: usage(0, 2_000) }),
  ];
}

/**
 * Volatile parts: the avoidable workload (system:1 changes twice in sess_date,
 * system:0 once in sess_edit, tools that only move in sess_order) and
 * sess_schema, where shell's schema changes twice. Every break misses 48,900
 * tokens on claude-sonnet-4-5: $0.168705 each.
 */
export function volatileWorkload(): CacheEvent[] {
  return [
    ...avoidableWorkload(),
    turn('k1', { sessionId: 'sess_schema', at: 0 }),
    turn('k2', { sessionId: 'sess_schema', at: MINUTE, tools: tools(SEED_TOOLS, { shell: 2 }) }),
    turn('k3', { sessionId: 'sess_schema', at: 2 * MINUTE, tools: tools(SEED_TOOLS, { shell: 3 }) }),
  ];
}

/**
 * Chronic misses: five turns a minute apart per session, on claude-sonnet-4-5.
 * - sess_clock: system block 0 is a clock, new on every turn; each turn writes 48,900
 *   (4 system_changed breaks, $0.168705 each): leading_volatile_block, 245,100 not read.
 * - sess_lookback: the only message marker jumps 30 messages per turn; each turn writes
 *   40,000: lookback_exceeded, 200,600 not read.
 * - sess_nomarker: 20,000 input, nothing written or read: no_breakpoint, 100,600 not read.
 * - sess_tiny: 300 input tokens, under the 1,024 minimum: below_minimum, 1,500 not read.
 * - sess_healthy: reads its prefix every turn: not chronic.
 */
export function chronicWorkload(): CacheEvent[] {
  const events: CacheEvent[] = [];
  const five = (session: string, spec: (i: number) => Parameters<typeof turn>[1]) => {
    for (let i = 0; i < 5; i++) events.push(turn(`${session}-${i}`, { sessionId: session, at: i * MINUTE, ...spec(i) }));
  };
  five('sess_clock', (i) => ({ systemBlockHashes: [hashString(`clock ${i}`), hashString('You are a coding agent.')], usage: usage(0, 48_900) }));
  five('sess_lookback', (i) => ({
    messageHashes: Array.from({ length: 30 * i + 1 }, (_, m) => hashString(`message ${m}`)),
    cacheControl: { enabled: true, ttl: '5m', scope: 'tools+system+messages', markers: [`messages:${30 * i}`] },
    usage: usage(0, 40_000),
  }));
  five('sess_nomarker', () => ({ cacheControl: undefined, usage: usage(0, 0, 20_120) }));
  five('sess_tiny', () => ({ usage: usage(0, 0, 300) }));
  five('sess_healthy', (i) => ({ usage: i === 0 ? usage(0, 48_900) : usage(48_900, 200) }));
  return events;
}

/**
 * Fan-out cold starts: in sess_fan, subagents a, b and c start 0, 2 and 5 s apart with the
 * same prefix, each writing its 48,900 tokens (claude-sonnet-4-5): b and c write 97,800 again,
 * 2 × 48,900 × ($3.75 − $0.30) / 1M = $0.33741. Subagent d starts a minute later (outside the
 * window); sess_other's main starts with another system prompt. In sess_house two agents of a
 * model with no known price start 1 s apart: 2,000 written again, unpriced.
 */
export function fanOutWorkload(): CacheEvent[] {
  return [
    turn('fa', { sessionId: 'sess_fan', agentId: 'a', at: 0 }),
    turn('fb', { sessionId: 'sess_fan', agentId: 'b', at: 2_000 }),
    turn('fc', { sessionId: 'sess_fan', agentId: 'c', at: 5_000 }),
    turn('fd', { sessionId: 'sess_fan', agentId: 'd', at: 60_000 }),
    turn('o1', { sessionId: 'sess_other', at: 1_000, systemBlockHashes: [hashString('another system')] }),
    turn('h1', { sessionId: 'sess_house', agentId: 'a', at: 0, model: 'house-model-7', usage: usage(0, 2_000) }),
    turn('h2', { sessionId: 'sess_house', agentId: 'b', at: 1_000, model: 'house-model-7', usage: usage(0, 2_000) }),
  ];
}

/**
 * Agreement: the avoidable workload with the provider's diagnosis on three breaks (o2
 * tools_changed and d2 system_changed agree; d3 says messages_changed, cachebreak
 * system_changed) and the harness's report on two (o2 "tools changed" agrees; m2 says
 * "system prompt changed", cachebreak cache_control_changed).
 */
export function agreementWorkload(): { events: CacheEvent[]; externalBreaks: ExternalBreak[] } {
  const diagnosis = (type: string) => ({ cache_miss_reason: { type } });
  const types: Record<string, string> = { o2: 'tools_changed', d2: 'system_changed', d3: 'messages_changed' };
  const events = avoidableWorkload().map((e): CacheEvent => {
    const type = types[e.requestId];
    return type === undefined || e.type !== 'turn' ? e : { ...e, diagnostics: diagnosis(type) };
  });
  const report = (sessionId: string, at: number, reason: string): ExternalBreak => ({
    harness: 'claude-code', sessionId, agentId: 'main', source: 'repl_main_thread', ts: T0 + at + 10_000, reason, callNumber: null,
    previousCacheReadTokens: null, currentCacheReadTokens: 0, cacheCreationTokens: 48_900, diffPath: null, file: null, line: null,
  });
  return { events, externalBreaks: [report('sess_order', MINUTE, 'tools changed (+0/-0 tools)'), report('sess_marker', MINUTE, 'system prompt changed')] };
}
