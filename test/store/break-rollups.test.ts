// The cause and changed-tool breakdowns read per-minute break rollups that
// triggers keep (migrations/0007). For random workloads — late, repeated and
// moved events, so breaks are inserted, revised and dropped — and after
// retention deletes old breaks, they must equal an aggregation of the break
// records themselves, filtered or not.
import fc from 'fast-check';
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SERVICE_DETECTION } from '../../src/prices/index.js';
import type { BreakRecord } from '../../src/core/types.js';
import { SqliteStore } from '../../src/store/sqlite/store.js';
import type { BreakCauseRow, ChangedTool, Filters } from '../../src/store/store.js';
import { T0 } from '../core/scenario.js';
import { freshStore, tempDir } from '../helpers.js';
import { eventsOf, requestArb } from './random-workload.js';

const FILTERS: Filters[] = [
  {},
  { model: ['claude-opus-4-5'] },
  { provider: ['bedrock'] },
  { agentId: ['sub'] },
  { reason: ['tools_order_changed', 'system_changed'] },
  // Per session, the breaks are read themselves rather than the rollups.
  { sessionId: ['s1'] },
  { sessionId: ['s2'], agentId: ['main'] },
];

function matches(b: BreakRecord, f: Filters): boolean {
  const ok = (values: string[] | undefined, value: string | null) => !values || values.includes(value ?? '');
  return ok(f.model, b.model) && ok(f.provider, b.provider) && ok(f.agentId, b.agentId) && ok(f.reason, b.reason) && ok(f.sessionId, b.sessionId);
}

function causesOf(records: BreakRecord[]): BreakCauseRow[] {
  const rows = new Map<string, BreakCauseRow & { micro: number }>();
  for (const b of records) {
    const key = `${b.reason}\u0000${b.cause ?? ''}`;
    const row = rows.get(key) ?? { reason: b.reason, cause: b.cause, breaks: 0, missedCacheReadTokens: 0, estimatedExtraCostUsd: 0, unpricedBreaks: 0, micro: 0 };
    row.breaks++;
    row.missedCacheReadTokens += b.missedCacheReadTokens;
    // An unknown price is counted, never added as $0 (SPEC §4.10).
    if (b.estimatedExtraCostUsd === null) row.unpricedBreaks++;
    else row.micro += Math.round(b.estimatedExtraCostUsd * 1e6);
    rows.set(key, row);
  }
  return [...rows.values()]
    .map(({ micro, ...row }) => ({ ...row, estimatedExtraCostUsd: row.unpricedBreaks === row.breaks ? null : micro / 1e6 }))
    .sort((a, b) => b.breaks - a.breaks || a.reason.localeCompare(b.reason) || (a.cause ?? '').localeCompare(b.cause ?? ''));
}

function toolsOf(records: BreakRecord[]): ChangedTool[] {
  const counts = new Map<string, number>();
  for (const b of records) for (const name of b.changedToolNames) counts.set(name, (counts.get(name) ?? 0) + 1);
  return [...counts].map(([name, breaks]) => ({ name, breaks })).sort((a, b) => b.breaks - a.breaks || (a.name < b.name ? -1 : 1));
}

describe('break rollups', () => {
  it('equal an aggregation of the break records, through revisions, drops and retention', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(requestArb, { minLength: 2, maxLength: 25 }), fc.infiniteStream(fc.nat()), fc.integer({ min: 1, max: 6 }), async (requests, randomness, batchSize) => {
        const events = eventsOf(requests);
        const sent = [...events, ...events.slice(0, 3)]
          .map((event) => ({ event, key: randomness.next().value }))
          .sort((a, b) => a.key - b.key)
          .map((x) => x.event);
        const store = freshStore();
        for (let i = 0; i < sent.length; i += batchSize) await store.write([{ project: 'default', events: sent.slice(i, i + batchSize) }]);
        const check = async () => {
          const records = (await store.breaks('default', {}, {}, { limit: 1000 })).items;
          for (const filters of FILTERS) {
            const mine = records.filter((b) => matches(b, filters));
            expect(await store.breakCauses('default', {}, filters), JSON.stringify(filters)).toEqual(causesOf(mine));
            expect(await store.changedTools('default', {}, filters, 100), JSON.stringify(filters)).toEqual(toolsOf(mine));
          }
        };
        await check();
        await store.prune({ turnsBefore: T0 + 60_000 });
        await check();
        await store.close();
      }),
      { numRuns: 60 },
    );
  });

  it('are filled from the breaks already stored when a database from an earlier release is migrated', async () => {
    const db = join(tempDir(), 'v0.1.0.db');
    copyFileSync(new URL('../fixtures/db/v0.1.0.db', import.meta.url), db);
    const store = new SqliteStore(db, SERVICE_DETECTION);
    try {
      const records = (await store.breaks('default', {}, {}, { limit: 1000 })).items;
      expect(records.map((b) => b.reason).sort()).toEqual(['system_changed', 'tools_order_changed']);
      expect(await store.breakCauses('default', {}, {})).toEqual(causesOf(records));
      expect(await store.changedTools('default', {}, {}, 100)).toEqual(toolsOf(records));
      expect(await store.changedTools('default', {}, {}, 100)).toHaveLength(2);
    } finally {
      await store.close();
    }
  });
});
