// The store must agree with the core's reference evaluation however events
// arrive: in any order, in any batches, repeated. Its rollups and stream sums
// must equal a scan of the turns.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SERVICE_DETECTION } from '../../src/prices/index.js';
import { addUsage, emptySums } from '../../src/core/rate.js';
import { evaluateEvents, foldEvents } from '../../src/core/stream.js';
import type { CacheEvent, Evaluation } from '../../src/core/types.js';
import { withFreshStore } from '../store-under-test.js';
import { deliveryArbs, eventsOf, shuffled, storedEvaluations } from './random-workload.js';

const byId = (list: Evaluation[]) =>
  Object.fromEntries(
    list.map((e) => [
      e.requestId,
      { state: e.state, previousRequestId: e.previousRequestId, concurrentRequestIds: e.concurrentRequestIds, break: e.break },
    ]),
  );

describe('store against the reference evaluation', () => {
  it('gives the same states and breaks for any order, batching and repetition of events', async () => {
    await fc.assert(
      fc.asyncProperty(
        ...deliveryArbs,
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 60_000 })), { maxLength: 3 }),
        async (requests, randomness, duplicates, batchSize, conflicts) => {
          const base = eventsOf(requests);
          // Another source's figures for some usages of the same requests.
          const conflicting = conflicts.flatMap(([i, write]): CacheEvent[] => {
            const event = base[i % base.length]!;
            return event.type === 'snapshot' ? [] : [{ ...event, usage: { ...event.usage, write } }];
          });
          const events = [...base, ...conflicting];
          const sent = shuffled(events, randomness, duplicates);
          await withFreshStore(async (store) => {
            let accepted = 0;
            let repeated = 0;
            for (let i = 0; i < sent.length; i += batchSize) {
              const [counts] = (await store.write([{ project: 'default', events: sent.slice(i, i + batchSize) }])).counts;
              accepted += counts!.accepted;
              repeated += counts!.duplicates;
            }
            expect(accepted + repeated).toBe(sent.length);
            expect(repeated).toBeGreaterThanOrEqual(duplicates.length);
            expect(byId(await storedEvaluations(store))).toEqual(byId(evaluateEvents(events, SERVICE_DETECTION)));

            // Rollups (read through /v1/stats' query) equal a scan of the turns.
            const placed = foldEvents(events).filter((t) => t.usage);
            const expected = emptySums();
            for (const t of placed) addUsage(expected, t.usage!);
            const stats = await store.stats('default', { intervalMs: 24 * 3_600_000, filters: {} });
            const reference = evaluateEvents(events, SERVICE_DETECTION);
            const breaks = reference.filter((e) => e.break).length;
            const unmeasured = placed
              .filter((t) => !t.usage!.cacheReported)
              .reduce((n, t) => n + t.usage!.uncached + t.usage!.read + t.usage!.write, 0);
            const sum = (pick: (r: (typeof stats)[number]) => number) => stats.reduce((n, r) => n + pick(r), 0);
            expect(sum((r) => r.turns)).toBe(placed.length);
            expect(sum((r) => r.breaks)).toBe(breaks);
            expect(sum((r) => r.tokens.read)).toBe(expected.read);
            expect(sum((r) => r.tokens.write)).toBe(expected.write);
            expect(sum((r) => r.tokens.uncached)).toBe(expected.uncached);
            expect(sum((r) => r.unreportedInputTokens)).toBe(unmeasured);
            const missed = reference.reduce((n, e) => n + (e.break?.missedCacheReadTokens ?? 0), 0);
            expect(sum((r) => r.missedCacheReadTokens)).toBe(missed);
            // Stream sums (read through /v1/sessions) agree too.
            const sessions = (await store.sessions('default', {}, {}, { limit: 10 })).items;
            expect(sessions.reduce((n, s) => n + s.turns, 0)).toBe(placed.length);
            expect(sessions.reduce((n, s) => n + s.breaks, 0)).toBe(breaks);
            // The sessions table (kept by triggers) equals grouping the streams themselves, in every order:
            // naming every agent takes the grouping path.
            const everyAgent = { agentId: [...new Set(events.map((e) => e.agentId ?? 'main'))] };
            for (const order of ['recent', 'worst_cache_rate', 'extra_cost'] as const) {
              const whole = await store.sessions('default', {}, {}, { limit: 10 }, order);
              expect(whole).toEqual(await store.sessions('default', {}, everyAgent, { limit: 10 }, order));
            }
          });
        },
      ),
      { numRuns: 150 },
    );
  });
});
