// The queries behind the dashboards read what answers them, not every row of
// the project: the plan of each statement the store prepares says which
// index it uses.
import { describe, expect, it } from 'vitest';
import type { SqliteStore } from '../../src/store/sqlite/store.js';
import { freshStore } from '../helpers.js';
import { SEED_TOOLS, tools, turn, usage } from '../core/scenario.js';

/** Every turn after the first re-orders the tools: a break per turn, in `sessions` sessions. */
function breakingSessions(sessions: number, turns: number) {
  const forward = tools(SEED_TOOLS);
  const backward = [...forward].reverse();
  return Array.from({ length: turns }, (_, i) =>
    turn(`r${i}`, { sessionId: `s${i % sessions}`, at: i * 10_000, tools: Math.floor(i / sessions) % 2 ? backward : forward, usage: usage(0, 40_000) }),
  );
}

/** Runs `query` and returns the plan of every statement it prepared that reads `table` (or matches a pattern). */
async function plansOf(store: SqliteStore, table: string | RegExp, query: () => Promise<unknown>): Promise<string[]> {
  const reads = typeof table === 'string' ? new RegExp(`^select .* from "${table}"`, 'i') : table;
  const plans: string[] = [];
  const prepare = store.sqlite.prepare.bind(store.sqlite);
  store.sqlite.prepare = ((source: string) => {
    if (reads.test(source)) {
      const nulls = Array.from(source.matchAll(/\?/g), () => null); // the plan does not depend on the values
      plans.push((prepare(`EXPLAIN QUERY PLAN ${source}`).all(...nulls) as { detail: string }[]).map((r) => r.detail).join('; '));
    }
    return prepare(source);
  }) as typeof store.sqlite.prepare;
  try {
    await query();
  } finally {
    store.sqlite.prepare = prepare;
  }
  return plans;
}

describe('query plans', () => {
  it('find the breaks of one session through the stream index', async () => {
    const store = freshStore();
    await store.write([{ project: 'default', events: breakingSessions(2, 40) }]);
    let found: { sessionId: string }[] = [];
    const plans = await plansOf(store, 'breaks', async () => {
      found = (await store.breaks('default', {}, { sessionId: ['s1'] }, { limit: 50 })).items;
    });
    expect(found.map((b) => b.sessionId)).toEqual(Array(19).fill('s1'));
    expect(plans).toHaveLength(1);
    expect(plans[0]).toMatch(/SEARCH breaks USING INDEX breaks_stream_ts/);
  });

  it('rank sessions by reading the first rows of an index, not by sorting every session', async () => {
    const store = freshStore();
    await store.write([{ project: 'default', events: breakingSessions(30, 120) }]);
    const indexes = { recent: 'sessions_last_ts', worst_cache_rate: 'sessions_rate', extra_cost: 'sessions_cost' } as const;
    for (const [order, index] of Object.entries(indexes)) {
      let top: { sessionId: string }[] = [];
      const plans = await plansOf(store, 'sessions', async () => {
        top = (await store.sessions('default', { from: 0, to: Date.parse('2030-01-01') }, {}, { limit: 5 }, order as keyof typeof indexes)).items;
      });
      expect(top, order).toHaveLength(5);
      expect(plans, order).toHaveLength(1);
      expect(plans[0], order).toMatch(new RegExp(`^SEARCH sessions USING INDEX ${index} `));
      expect(plans[0], order).not.toContain('TEMP B-TREE');
    }
  });

  it('count usage waiting for its snapshot through the stream index, not by reading every turn', async () => {
    const store = freshStore();
    const waiting = (requestId: string) => ({ type: 'usage' as const, requestId, usage: usage(0, 0, 10) });
    await store.write([
      { project: 'default', events: [...breakingSessions(3, 60), waiting('w1'), waiting('w2')] },
      { project: 'other', events: [waiting('w3')] },
      { project: 'empty', events: breakingSessions(1, 2) },
    ]);
    let one: unknown;
    let all: unknown;
    const plans = await plansOf(store, 'turns', async () => {
      one = await store.waitingUsage('default');
      all = await store.waitingUsage();
    });
    expect(one).toEqual([{ project: 'default', waiting: 2 }]);
    expect(all).toEqual([
      { project: 'default', waiting: 2 },
      { project: 'empty', waiting: 0 },
      { project: 'other', waiting: 1 },
    ]);
    expect(await store.waitingUsage('unknown')).toEqual([{ project: 'unknown', waiting: 0 }]);
    expect(plans).toHaveLength(2);
    for (const plan of plans) expect(plan).toMatch(/^SEARCH turns USING INDEX turns_stream_ts \(stream_id=\?\)/);
  });

  it('find the cold turns of a range (fan-out cold starts) through the partial index turns_cold, not every turn', async () => {
    const store = freshStore();
    await store.write([{ project: 'default', events: breakingSessions(3, 30) }]);
    let cold: { requestId: string }[] = [];
    const plans = await plansOf(store, /^select[\s\S]* from turns t/i, async () => {
      cold = await store.coldTurns('default', { from: 0, to: Date.parse('2030-01-01') }, {}, 100);
    });
    expect(cold.map((t) => t.requestId)).toEqual(['r0', 'r1', 'r2']);
    expect(plans).toHaveLength(1);
    expect(plans[0]).toMatch(/SEARCH t USING INDEX turns_cold/);
  });
});
