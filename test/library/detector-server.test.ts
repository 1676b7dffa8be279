// The library and the server run the same detection: random workloads (every
// shape a harness may send, sessions with subagents and compactions,
// overlapping requests, several providers) go through an in-process Detector
// and, as SPEC §2 JSON, through a real `cachebreak serve`; the states and
// break records agree turn for turn, prices included when both have them.
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { breakFingerprint } from '../../src/core/fingerprint.js';
import { Detector } from '../../src/detector/index.js';
import { toWireEvent } from '../../src/core/wire.js';
import { databasePrices } from '../../src/prices/index.js';
import type { CacheEvent, Evaluation, Usage } from '../../src/core/types.js';
import { turnsOf } from '../e2e/api.js';
import { postEvents, startServer, type ServerProcess } from '../e2e/server.js';
import { eventsOf, requestArb } from '../store/random-workload.js';

const WORKLOADS = 40;

/**
 * The usage a provider could have sent: nothing read or written without a
 * cache field, no write without a write field (the random workload draws
 * them independently).
 */
function reportable(usage: Usage): Usage {
  if (!usage.cacheReported) return { ...usage, read: 0, write: 0, write1h: 0, writeReported: false };
  return usage.writeReported ? usage : { ...usage, write: 0, write1h: 0 };
}

/** One workload's events, its ids and sessions made its own, so that workloads share a server without meeting. */
function workload(k: number, requests: Parameters<typeof eventsOf>[0]): CacheEvent[] {
  return eventsOf(requests).map((event): CacheEvent => {
    const own = { ...event, requestId: `w${k}_${event.requestId}` } as CacheEvent;
    if (own.sessionId !== undefined) own.sessionId = `w${k}_${own.sessionId}`;
    if (own.type !== 'snapshot') own.usage = reportable(own.usage);
    return own;
  });
}

/** A seeded shuffle: the detector gets the events in another order than the server. */
function shuffled<T>(items: readonly T[], seed: number): T[] {
  let state = seed;
  const random = () => ((state = (state * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
  return items.map((item) => ({ item, key: random() })).sort((a, b) => a.key - b.key).map((x) => x.item);
}

const comparable = (e: Pick<Evaluation, 'state' | 'break'>) => ({
  state: e.state,
  break: e.break && { ...e.break, ts: new Date(e.break.ts).toISOString() },
});

/** The library's evaluation as the REST API serves it: with its cause's fingerprint. */
const served = (e: Pick<Evaluation, 'state' | 'break'>) => {
  const local = comparable(e);
  return { ...local, break: local.break && { ...local.break, fingerprint: breakFingerprint(e.break!) } };
};

describe('the detector library against the server', () => {
  let server: ServerProcess;
  beforeAll(async () => {
    server = await startServer({ lifetime: 'file' });
  }, 30_000);

  it('gives the same states and break records as a real server for the same random workloads', { timeout: 120_000 }, async () => {
    const samples = fc.sample(fc.array(requestArb, { minLength: 10, maxLength: 40 }), { numRuns: WORKLOADS, seed: 18 });
    let breaks = 0;
    let turns = 0;
    for (const [k, requests] of samples.entries()) {
      const events = workload(k, requests);
      const reply = await postEvents(server.url, { events: events.map(toWireEvent) });
      expect(reply.status).toBe(200);
      expect((reply.body as { rejected: unknown[] }).rejected).toEqual([]);

      const detector = new Detector({ prices: databasePrices });
      for (const event of shuffled(events, k + 1)) detector.add(event);

      const sessions = new Set(events.flatMap((event) => (event.sessionId === undefined ? [] : [event.sessionId])));
      for (const session of sessions) {
        const stored = await turnsOf(server.url, session);
        for (const turn of stored) {
          if (turn.state === null) continue;
          const local = detector.evaluation(turn.requestId);
          expect(local, turn.requestId).toBeDefined();
          expect(served(local!), turn.requestId).toEqual(comparable(turn as unknown as Evaluation));
          turns++;
          if (turn.break) breaks++;
        }
        expect(detector.breaks(session).length).toBe(stored.filter((t) => t.break).length);
      }
    }
    // The workloads are not trivial: they judge many turns and find breaks.
    console.log(`detector = server: ${turns} turns, ${breaks} breaks in ${WORKLOADS} workloads`);
    expect(turns).toBeGreaterThan(500);
    expect(breaks).toBeGreaterThan(20);
  });
});
