// Retention deletes raw turns past their age, keeps rollups (and the session
// sums) longer, and works in steps while the store keeps taking writes.
import { describe, expect, it } from 'vitest';
import { MINUTE, T0, turn, usage } from '../core/scenario.js';
import { storeUnderTest } from '../store-under-test.js';

const DAY = 24 * 60 * MINUTE;

/** Three sessions, one a day; each with a cold turn, hits, and a break. */
function threeDays() {
  return [0, 1, 2].flatMap((day) =>
    Array.from({ length: 1_000 }, (_, i) =>
      turn(`d${day}_${i}`, {
        sessionId: `day${day}`,
        at: day * DAY + i * 30_000,
        usage: i === 500 ? usage(0, 48_000) : usage(i === 0 ? 0 : 48_000, i === 0 ? 48_000 : 300),
      }),
    ),
  );
}

describe('retention', () => {
  it('deletes old turns and their breaks, keeps rollups and session sums', async () => {
    const store = await storeUnderTest();
    await store.write([{ project: 'default', events: threeDays() }]);
    const all = { from: T0, to: T0 + 3 * DAY, intervalMs: DAY, filters: {} };
    const before = await store.stats('default', all);
    expect(before.map((b) => [b.turns, b.breaks])).toEqual([[1000, 1], [1000, 1], [1000, 1]]);

    const result = await store.prune({ turnsBefore: T0 + DAY + DAY / 2 });
    // Day 0 and the first half of day 1 (its turns run for ~8.3 h).
    expect(result).toEqual({ turns: 2_000, rollups: 0 });
    expect(await store.sessionTurns('default', 'day0')).toEqual([]);
    expect((await store.sessionTurns('default', 'day2'))!).toHaveLength(1000);
    expect((await store.breaks('default', {}, {}, { limit: 10 })).items.map((b) => b.sessionId)).toEqual(['day2']);
    // Dashboards still see the history.
    expect(await store.stats('default', all)).toEqual(before);
    expect((await store.sessions('default', {}, {}, { limit: 10 })).items.map((s) => [s.sessionId, s.turns])).toEqual([
      ['day2', 1000],
      ['day1', 1000],
      ['day0', 1000],
    ]);
    // New turns still join their stream.
    await store.write([{ project: 'default', events: [turn('d2_late', { sessionId: 'day2', at: 2 * DAY + 1_000 * 30_000, usage: usage(48_000, 10) })] }]);
    expect((await store.sessionTurns('default', 'day2'))!.at(-1)).toMatchObject({ requestId: 'd2_late', state: 'hit' });
  });

  it('deletes rollups and emptied sessions past their own, longer retention', async () => {
    const store = await storeUnderTest();
    await store.write([{ project: 'default', events: threeDays() }]);
    await store.prune({ turnsBefore: T0 + 2 * DAY, rollupsBefore: T0 + DAY });
    const stats = await store.stats('default', { from: T0, to: T0 + 3 * DAY, intervalMs: DAY, filters: {} });
    const day = (ms: number) => Math.floor(ms / DAY) * DAY;
    expect(stats.map((b) => b.ts)).toEqual([day(T0 + DAY), day(T0 + 2 * DAY)]);
    expect((await store.sessions('default', {}, {}, { limit: 10 })).items.map((s) => s.sessionId)).toEqual(['day2', 'day1']);
    // A session that comes back after its stream was deleted starts a new one.
    await store.write([{ project: 'default', events: [turn('back', { sessionId: 'day0', at: 3 * DAY, usage: usage(0, 5_000) })] }]);
    expect((await store.sessionTurns('default', 'day0'))!.map((t) => [t.requestId, t.state])).toEqual([['back', 'cold']]);
  });
});
