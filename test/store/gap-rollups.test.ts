// gap_rollups (TTL advice's rollup) must equal the gaps of the stored turns
// however events arrive: in any order, in any batches, repeated, and after
// re-evaluation.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compareTurns } from '../../src/core/history.js';
import { hasGap, turnGap, type GapRow } from '../../src/core/insights/ttl.js';
import { foldEvents } from '../../src/core/stream.js';
import type { CacheEvent, Turn } from '../../src/core/types.js';
import type { SqliteStore } from '../../src/store/sqlite/store.js';
import { freshStore } from '../helpers.js';
import { deliveryArbs, eventsOf, requestArb, shuffled } from './random-workload.js';

/** The gaps of the turns, computed from the events alone with the core's definition. */
function expectedGaps(events: CacheEvent[]): GapRow[] {
  const streams = new Map<string, Turn[]>();
  for (const turn of foldEvents(events)) {
    if (!turn.usage || !hasGap(turn)) continue;
    const key = `${turn.sessionId}\u0000${turn.agentId}`;
    streams.set(key, [...(streams.get(key) ?? []), turn]);
  }
  const rows = new Map<string, GapRow>();
  for (const turns of streams.values()) {
    let previous: Turn | undefined;
    for (const turn of turns.sort(compareTurns)) {
      const gap = turnGap(previous, turn);
      previous = turn;
      const row = { sessionId: turn.sessionId, agentId: turn.agentId, model: turn.model ?? '', provider: turn.provider ?? '', bucket: gap.bucket };
      const key = JSON.stringify(row);
      const sums = rows.get(key) ?? { ...row, turns: 0, stake: 0, rewritten: 0, written: 0, written1h: 0 };
      sums.turns++;
      sums.stake += gap.stake;
      sums.rewritten += gap.rewritten;
      sums.written += turn.usage!.write;
      sums.written1h += turn.usage!.write1h;
      rows.set(key, sums);
    }
  }
  return sorted([...rows.values()]);
}

const sorted = (rows: GapRow[]) => [...rows].sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1));
const stored = async (store: SqliteStore) => sorted(await store.gapRows('default', {}, {}));

describe('gap rollups', () => {
  it('equal the gaps of the turns for any order, batching and repetition of events, and after re-evaluation', async () => {
    await fc.assert(
      fc.asyncProperty(
        ...deliveryArbs,
        async (requests, randomness, duplicates, batchSize) => {
          const events = eventsOf(requests);
          const sent = shuffled(events, randomness, duplicates);
          const store = freshStore();
          for (let i = 0; i < sent.length; i += batchSize) await store.write([{ project: 'default', events: sent.slice(i, i + batchSize) }]);
          const expected = expectedGaps(events);
          expect(await stored(store)).toEqual(expected);
          await store.reevaluate();
          expect(await stored(store)).toEqual(expected);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('are built for turns stored before they existed, when the database is evaluated again', async () => {
    const store = freshStore();
    const events = eventsOf(fc.sample(requestArb, { numRuns: 30, seed: 7 }));
    await store.write([{ project: 'default', events }]);
    // As a database written before gap_rollups: no gaps, and no mark that they are kept.
    store.sqlite.exec(`DELETE FROM gap_rollups; UPDATE turns SET gap_bucket = NULL, gap_stake = NULL, gap_rewritten = NULL; DELETE FROM meta WHERE key = 'gaps'`);
    expect(await store.needsReevaluation()).toBe(true);
    expect(await stored(store)).toEqual([]);
    await store.reevaluate();
    expect(await store.needsReevaluation()).toBe(false);
    expect(await stored(store)).toEqual(expectedGaps(events));
  });
});
