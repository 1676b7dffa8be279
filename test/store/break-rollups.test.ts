// The cause and changed-tool breakdowns read per-minute break rollups that
// triggers keep (migrations/0007; migrations/pg likewise). For random workloads — late, repeated and
// moved events, so breaks are inserted, revised and dropped — and after
// retention deletes old breaks, they must equal an aggregation of the break
// records themselves, filtered or not.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { BreakRecord } from '../../src/core/types.js';
import type { Filters } from '../../src/store/store.js';
import { T0 } from '../core/scenario.js';
import { withFreshStore } from '../store-under-test.js';
import { causesOf, toolsOf } from './break-aggregates.js';
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

describe('break rollups', () => {
  it('equal an aggregation of the break records, through revisions, drops and retention', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(requestArb, { minLength: 2, maxLength: 25 }), fc.infiniteStream(fc.nat()), fc.integer({ min: 1, max: 6 }), async (requests, randomness, batchSize) => {
        const events = eventsOf(requests);
        const sent = [...events, ...events.slice(0, 3)]
          .map((event) => ({ event, key: randomness.next().value }))
          .sort((a, b) => a.key - b.key)
          .map((x) => x.event);
        await withFreshStore(async (store) => {
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
        });
      }),
      { numRuns: 60 },
    );
  });
});
