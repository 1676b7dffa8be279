// Crafted workloads whose insights are known in advance: every figure the
// tests expect is computed by hand from these turns and the price table.
import { hashString } from '../../src/core/hash.js';
import type { CacheEvent } from '../../src/core/types.js';
import { MINUTE, SEED_TOOLS, tools, turn, usage } from '../core/scenario.js';

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
 * - sess_marker: the system marker moves from system:1 to system:0 (m2): counted.
 * - sess_ttl: the markers stay, their TTL goes from 5m to 1h (t2): a setting, not counted.
 * Every break misses the 48,900 tokens its baseline wrote.
 */
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
