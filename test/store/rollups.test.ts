// Dashboards and /v1/stats read per-minute rollups maintained at ingest; for
// random workloads (late, repeated, moved events included) every answer must
// equal the same aggregation computed from a scan of the raw turns.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { cacheRate } from '../../src/core/rate.js';
import type { GroupBy, StatsRow, TurnView } from '../../src/store/store.js';
import { withFreshStore } from '../store-under-test.js';
import { eventsOf, requestArb } from './random-workload.js';

const GROUPINGS: (GroupBy | undefined)[] = [undefined, 'model', 'provider', 'agentId', 'reason'];

/** The stats a scan of the turns gives, per minute and group. */
function scan(turns: TurnView[], groupBy: GroupBy | undefined): StatsRow[] {
  const rows = new Map<string, StatsRow & { microUsd: number }>();
  for (const t of turns) {
    if (t.state === null || !t.usage) continue;
    const ts = Math.floor(t.ts / 60_000) * 60_000;
    const group = groupBy === undefined ? undefined : groupBy === 'reason' ? (t.break?.reason ?? '') : (t[groupBy] ?? '');
    const key = `${ts}\u0000${group ?? ''}`;
    let row = rows.get(key);
    if (!row) {
      row = {
        ts, turns: 0, breaks: 0, cacheRate: null, missedCacheReadTokens: 0, estimatedExtraCostUsd: 0, unpricedBreaks: 0, microUsd: 0,
        tokens: { uncached: 0, read: 0, write: 0, write1h: 0, output: 0 }, unreportedInputTokens: 0,
        ...(group !== undefined ? { group } : {}),
      };
      rows.set(key, row);
    }
    const u = t.usage;
    row.turns++;
    row.tokens.output += u.output;
    // SPEC §5: the tokens served beside a rate are its population; unreported input is apart.
    if (u.cacheReported) {
      row.tokens.uncached += u.uncached;
      row.tokens.read += u.read;
      row.tokens.write += u.write;
      row.tokens.write1h += u.write1h;
    } else {
      row.unreportedInputTokens += u.uncached + u.read + u.write;
    }
    if (t.break) {
      row.breaks++;
      row.missedCacheReadTokens += t.break.missedCacheReadTokens;
      // SPEC §4.10: priced breaks are summed, unpriced ones counted.
      if (t.break.estimatedExtraCostUsd === null) row.unpricedBreaks++;
      else row.microUsd += Math.round(t.break.estimatedExtraCostUsd * 1e6);
    }
  }
  return [...rows.values()].map(({ microUsd, ...row }) => ({
    ...row,
    cacheRate: cacheRate(row.tokens),
    estimatedExtraCostUsd: row.breaks > 0 && row.unpricedBreaks === row.breaks ? null : microUsd / 1e6,
  }));
}

const sortRows = (rows: StatsRow[]) => [...rows].sort((a, b) => a.ts - b.ts || (a.group ?? '').localeCompare(b.group ?? ''));

describe('rollups', () => {
  it('answer every grouping exactly as a scan of the raw turns does, for random workloads', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(requestArb, { minLength: 1, maxLength: 25 }), fc.infiniteStream(fc.nat()), fc.integer({ min: 1, max: 6 }), async (requests, randomness, batchSize) => {
        const events = eventsOf(requests);
        const sent = [...events, ...events.slice(0, 3)]
          .map((event) => ({ event, key: randomness.next().value }))
          .sort((a, b) => a.key - b.key)
          .map((x) => x.event);
        await withFreshStore(async (store) => {
          for (let i = 0; i < sent.length; i += batchSize) await store.write([{ project: 'default', events: sent.slice(i, i + batchSize) }]);
          const turns = [...((await store.sessionTurns('default', 's1')) ?? []), ...((await store.sessionTurns('default', 's2')) ?? [])];
          for (const groupBy of GROUPINGS) {
            const stats = await store.stats('default', { intervalMs: 60_000, filters: {}, ...(groupBy ? { groupBy } : {}) });
            const expected = sortRows(scan(turns, groupBy));
            const got = sortRows(stats);
            expect(got.map(({ cacheRate: _c, ...r }) => r)).toEqual(expected.map(({ cacheRate: _c, ...r }) => r));
            got.forEach((row, i) => (row.cacheRate === null ? expect(expected[i]!.cacheRate).toBeNull() : expect(row.cacheRate).toBeCloseTo(expected[i]!.cacheRate!, 12)));
            // The tokens served beside each rate reproduce it exactly.
            for (const row of got) expect(row.cacheRate).toBe(cacheRate(row.tokens));
          }
        });
      }),
      { numRuns: 80 },
    );
  });
});
