// The fingerprint of a break's cause, over breaks the detector finds: the same
// cause in two sessions is one fingerprint, another changed part another.
import { describe, expect, it } from 'vitest';
import { breakFingerprint } from '../../src/core/fingerprint.js';
import { hashString } from '../../src/core/hash.js';
import type { BreakRecord, TurnEvent } from '../../src/core/types.js';
import { evaluate, MINUTE, SEED_TOOLS, tools, turn, usage, type TurnSpec } from './scenario.js';

const WARM = usage(48_900, 400);

/** The break of a session's second turn, the first warm and the second changed by `change`. */
function breakOf(sessionId: string, change: TurnSpec, at = MINUTE): BreakRecord {
  const events: TurnEvent[] = [
    turn(`${sessionId}_1`, { sessionId, usage: WARM }),
    turn(`${sessionId}_2`, { sessionId, at, usage: usage(0, 49_300), ...change }),
  ];
  const record = evaluate(events).get(`${sessionId}_2`)!.break;
  expect(record, sessionId).not.toBeNull();
  return record!;
}

const reordered = (first: string) => tools([first, ...SEED_TOOLS.filter((n) => n !== first)]);

describe('break fingerprint', () => {
  it('is 16 lowercase hex digits', () => {
    expect(breakFingerprint(breakOf('s1', { tools: reordered('shell') }))).toMatch(/^[0-9a-f]{16}$/);
  });

  it('the same tool moved in two sessions, at other times and sizes, is one fingerprint; another tool moved is another', () => {
    const a = breakOf('s1', { tools: reordered('shell') });
    const b = breakOf('s2', { tools: reordered('shell') }, 3 * MINUTE);
    const other = breakOf('s3', { tools: reordered('mcp__github__search_issues') });
    expect([a.reason, b.reason, other.reason]).toEqual(['tools_order_changed', 'tools_order_changed', 'tools_order_changed']);
    expect(a.sessionId).not.toBe(b.sessionId);
    expect(breakFingerprint(a)).toBe(breakFingerprint(b));
    expect(breakFingerprint(other)).not.toBe(breakFingerprint(a));
  });

  it('a changed schema is not the same cause as a moved tool of the same name', () => {
    const moved = breakOf('s1', { tools: reordered('shell') });
    const described = breakOf('s2', { tools: tools(SEED_TOOLS, { shell: 2 }) });
    expect(described.reason).toBe('tools_schema_changed');
    expect(breakFingerprint(described)).not.toBe(breakFingerprint(moved));
  });

  it('system changes are told apart by the changed block, not by its new content', () => {
    const system = (text: string) => ({ systemBlockHashes: [hashString('billing'), hashString(text)] });
    const a = breakOf('s1', system('edited once'));
    const b = breakOf('s2', system('edited twice'));
    const first = breakOf('s3', { systemBlockHashes: [hashString('other billing'), hashString('You are a coding agent.')] });
    expect([a.changedSystemBlocks, first.changedSystemBlocks]).toEqual([[1], [0]]);
    expect(breakFingerprint(a)).toBe(breakFingerprint(b));
    expect(breakFingerprint(first)).not.toBe(breakFingerprint(a));
  });

  it('model changes are told apart by the family asked for; a dated id is its family', () => {
    const a = breakOf('s1', { model: 'claude-opus-4-5' });
    const b = breakOf('s2', { model: 'claude-opus-4-5-20251101' });
    const c = breakOf('s3', { model: 'claude-haiku-4-5' });
    expect(a.reason).toBe('model_changed');
    expect(breakFingerprint(a)).toBe(breakFingerprint(b));
    expect(breakFingerprint(c)).not.toBe(breakFingerprint(a));
  });

  it('an expiry is told apart by its cause, provider and family', () => {
    const expired = breakOf('s1', {}, 6 * MINUTE);
    const again = breakOf('s2', {}, 9 * MINUTE);
    const evicted = breakOf('s3', {});
    expect([expired.cause, again.cause, evicted.cause]).toEqual(['ttl_expired', 'ttl_expired', 'likely_server_eviction']);
    expect(breakFingerprint(expired)).toBe(breakFingerprint(again));
    expect(breakFingerprint(evicted)).not.toBe(breakFingerprint(expired));
    expect(breakFingerprint({ ...expired, provider: 'bedrock' })).not.toBe(breakFingerprint(expired));
  });
});
