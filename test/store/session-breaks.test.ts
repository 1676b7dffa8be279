// GET /v1/breaks?sessionId=… reads the session's breaks, not every break of
// the project: the plan of the query the store runs says which index it uses.
import { describe, expect, it } from 'vitest';
import { freshStore } from '../helpers.js';
import { SEED_TOOLS, tools, turn, usage } from '../core/scenario.js';

/** Every turn after the first re-orders the tools: a break per turn, in two sessions. */
function breakingSessions() {
  const forward = tools(SEED_TOOLS);
  const backward = [...forward].reverse();
  return Array.from({ length: 40 }, (_, i) =>
    turn(`r${i}`, { sessionId: `s${i % 2}`, at: i * 10_000, tools: (i >> 1) % 2 ? backward : forward, usage: usage(0, 40_000) }),
  );
}

describe('breaks of one session', () => {
  it('are found through the stream index', async () => {
    const store = freshStore();
    await store.write([{ project: 'default', events: breakingSessions() }]);
    const plans: string[] = [];
    const prepare = store.sqlite.prepare.bind(store.sqlite);
    // Every statement the store prepares from here on is also explained.
    store.sqlite.prepare = ((source: string) => {
      if (/^select .* from "breaks"/i.test(source)) {
        const rows = prepare(`EXPLAIN QUERY PLAN ${source}`).all(...placeholders(source)) as { detail: string }[];
        plans.push(rows.map((r) => r.detail).join('; '));
      }
      return prepare(source);
    }) as typeof store.sqlite.prepare;
    const { items } = await store.breaks('default', {}, { sessionId: ['s1'] }, { limit: 50 });
    expect(items.map((b) => b.sessionId)).toEqual(Array(19).fill('s1'));
    expect(plans).toHaveLength(1);
    expect(plans[0]).toMatch(/SEARCH breaks USING INDEX breaks_stream_ts/);
  });
});

/** Nulls for each ? of a statement: the plan does not depend on the values. */
function placeholders(source: string): null[] {
  return Array.from(source.matchAll(/\?/g), () => null);
}
