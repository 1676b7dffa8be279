// The version where an alert's change began, read from the breaks of its
// window and the window before, on the store under test; a window holding
// more breaks than are read answers null, not a guess.
import { describe, expect, it } from 'vitest';
import { versionWhereChangeBegan } from '../../src/alerts/versions.js';
import type { CacheEvent } from '../../src/core/types.js';
import { MINUTE, SEED_TOOLS, T0, tools, turn, usage } from '../core/scenario.js';
import { storeUnderTest } from '../store-under-test.js';

const REORDERED = tools(['shell', ...SEED_TOOLS.filter((n) => n !== 'shell')]);

/** A warm turn, then one whose tools were re-ordered: a break a minute after `at`, run by `agentVersion`. */
function breakingSession(sessionId: string, at: number, agentVersion: string): CacheEvent[] {
  return [
    turn(`${sessionId}_1`, { sessionId, at, usage: usage(48_900, 400), agentVersion }),
    turn(`${sessionId}_2`, { sessionId, at: at + MINUTE, usage: usage(0, 49_300), tools: REORDERED, agentVersion }),
  ];
}

describe('the version where an alert\'s change began', () => {
  it('is the first version of the window the window before did not run, and null once a window holds more breaks than are read', async () => {
    const store = await storeUnderTest();
    // The window before (0–10 min): two breaks on 1.0. The window (10–20 min): two on 1.0, then one on 2.0.
    const events = [
      ...breakingSession('b1', 1 * MINUTE, '1.0'),
      ...breakingSession('b2', 3 * MINUTE, '1.0'),
      ...breakingSession('w1', 10 * MINUTE, '1.0'),
      ...breakingSession('w2', 12 * MINUTE, '1.0'),
      ...breakingSession('w3', 15 * MINUTE, '2.0'),
    ];
    await store.write([{ project: 'p', events }]);
    const [from, to] = [T0 + 10 * MINUTE, T0 + 20 * MINUTE];
    expect((await store.breaks('p', { from: from - 10 * MINUTE, to }, {}, { limit: 10 })).items).toHaveLength(5);
    expect(await versionWhereChangeBegan(store, 'p', from, to, {}, 4)).toBe('2.0');
    expect(await versionWhereChangeBegan(store, 'p', from, to, {})).toBe('2.0');
    // Two more breaks on 1.0 late in the window: five, more than four are read. Its oldest are never
    // reached, nor is the window before, so 1.0 would look new; the answer is unknown instead.
    await store.write([{ project: 'p', events: [...breakingSession('w4', 16 * MINUTE, '1.0'), ...breakingSession('w5', 17 * MINUTE, '1.0')] }]);
    expect(await versionWhereChangeBegan(store, 'p', from, to, {}, 4)).toBeNull();
    expect(await versionWhereChangeBegan(store, 'p', from, to, {})).toBe('2.0');
  });
});
