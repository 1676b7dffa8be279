// The store must agree with the core's reference evaluation however events
// arrive: in any order, in any batches, repeated. Its rollups and stream sums
// must equal a scan of the turns.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEFAULT_DETECTION } from '../../src/core/options.js';
import { addUsage, emptySums } from '../../src/core/rate.js';
import { evaluateEvents, foldEvents } from '../../src/core/stream.js';
import type { CacheEvent, Evaluation } from '../../src/core/types.js';
import { hashString } from '../../src/core/hash.js';
import { T0, tools, turn, usage } from '../core/scenario.js';
import { freshStore } from '../helpers.js';
import type { SqliteStore } from '../../src/store/sqlite/store.js';

const requestArb = fc.record({
  session: fc.constantFrom('s1', 's2'),
  agent: fc.constantFrom('main', 'main', 'sub'),
  // Few distinct times, so ties (ordered by requestId) are common.
  at: fc.integer({ min: 0, max: 3 }).map((m) => m * 60_000),
  toolOrder: fc.shuffledSubarray(['read_file', 'shell', 'grep', 'mcp__a__x'], { minLength: 2 }),
  system: fc.constantFrom('a', 'b'),
  messages: fc.integer({ min: 0, max: 3 }),
  read: fc.constantFrom(0, 0, 30_000, 50_000),
  write: fc.constantFrom(0, 2_000, 50_000),
  reported: fc.integer({ min: 0, max: 9 }).map((n) => n > 0),
  shape: fc.constantFrom('turn', 'split', 'split-no-session', 'split-no-agent', 'usage-only', 'snapshot-only'),
});
type Request = typeof requestArb extends fc.Arbitrary<infer R> ? R : never;

function eventsOf(requests: Request[]): CacheEvent[] {
  return requests.flatMap((r, i): CacheEvent[] => {
    const messageHashes = Array.from({ length: r.messages }, (_, m) => hashString(`${r.session}-${m}`));
    const base = turn(`req_${i}`, {
      sessionId: r.session,
      agentId: r.agent,
      at: r.at,
      tools: tools(r.toolOrder),
      systemHash: r.system,
      messageHashes,
      usage: { ...usage(r.read, r.write), cacheReported: r.reported },
    });
    const { type: _t, usage: u, endTs, diagnostics: _d, ...snapshot } = base;
    const usageEvent: CacheEvent = { type: 'usage', requestId: base.requestId, ts: endTs!, provider: 'anthropic', usage: u };
    switch (r.shape) {
      case 'turn':
        return [base];
      case 'split':
        return [{ ...snapshot, type: 'snapshot' }, { ...usageEvent, sessionId: r.session, agentId: r.agent }];
      case 'split-no-session':
        return [{ ...snapshot, type: 'snapshot' }, usageEvent];
      case 'split-no-agent':
        // Placed on the session's main stream until its snapshot moves it to its own.
        return [{ ...snapshot, type: 'snapshot' }, { ...usageEvent, sessionId: r.session }];
      case 'usage-only':
        return [{ ...usageEvent, sessionId: r.session, agentId: r.agent, ts: T0 + r.at }];
      default:
        return [{ ...snapshot, type: 'snapshot' }];
    }
  });
}

async function storedEvaluations(store: SqliteStore): Promise<Evaluation[]> {
  const out: Evaluation[] = [];
  for (const session of ['s1', 's2']) {
    for (const view of (await store.sessionTurns('default', session)) ?? []) {
      if (view.state === null) continue;
      out.push({ requestId: view.requestId, state: view.state, previousRequestId: view.break?.previousRequestId ?? null, break: view.break });
    }
  }
  return out;
}

const byId = (list: Evaluation[]) =>
  Object.fromEntries(list.map((e) => [e.requestId, { state: e.state, break: e.break }]));

describe('store against the reference evaluation', () => {
  it('gives the same states and breaks for any order, batching and repetition of events', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(requestArb, { minLength: 1, maxLength: 20 }),
        fc.infiniteStream(fc.nat()),
        fc.array(fc.nat(), { maxLength: 6 }),
        fc.integer({ min: 1, max: 7 }),
        async (requests, randomness, duplicates, batchSize) => {
          const events = eventsOf(requests);
          const sent = [...events, ...duplicates.map((i) => events[i % events.length]!)]
            .map((event) => ({ event, key: randomness.next().value }))
            .sort((a, b) => a.key - b.key)
            .map((x) => x.event);
          const store = freshStore();
          let accepted = 0;
          let repeated = 0;
          for (let i = 0; i < sent.length; i += batchSize) {
            const [counts] = (await store.write([{ project: 'default', events: sent.slice(i, i + batchSize) }])).counts;
            accepted += counts!.accepted;
            repeated += counts!.duplicates;
          }
          expect(accepted + repeated).toBe(sent.length);
          expect(repeated).toBeGreaterThanOrEqual(duplicates.length);
          expect(byId(await storedEvaluations(store))).toEqual(byId(evaluateEvents(events, DEFAULT_DETECTION)));

          // Rollups (read through /v1/stats' query) equal a scan of the turns.
          const placed = foldEvents(events).filter((t) => t.usage);
          const expected = emptySums();
          for (const t of placed) addUsage(expected, t.usage!);
          const stats = await store.stats('default', { intervalMs: 24 * 3_600_000, filters: {} });
          const reference = evaluateEvents(events, DEFAULT_DETECTION);
          const breaks = reference.filter((e) => e.break).length;
          const unmeasured = placed
            .filter((t) => !t.usage!.cacheReported)
            .reduce((n, t) => n + t.usage!.uncached + t.usage!.read + t.usage!.write, 0);
          const sum = (pick: (r: (typeof stats)[number]) => number) => stats.reduce((n, r) => n + pick(r), 0);
          expect(sum((r) => r.turns)).toBe(placed.length);
          expect(sum((r) => r.breaks)).toBe(breaks);
          expect(sum((r) => r.tokens.read)).toBe(expected.read);
          expect(sum((r) => r.tokens.write)).toBe(expected.write);
          expect(sum((r) => r.tokens.uncached)).toBe(expected.uncached + unmeasured);
          const missed = reference.reduce((n, e) => n + (e.break?.missedCacheReadTokens ?? 0), 0);
          expect(sum((r) => r.missedCacheReadTokens)).toBe(missed);
          // Stream sums (read through /v1/sessions) agree too.
          const sessions = (await store.sessions('default', {}, {}, { limit: 10 })).items;
          expect(sessions.reduce((n, s) => n + s.turns, 0)).toBe(placed.length);
          expect(sessions.reduce((n, s) => n + s.breaks, 0)).toBe(breaks);
          await store.close();
        },
      ),
      { numRuns: 150 },
    );
  });
});
