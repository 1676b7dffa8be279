// The SQLite store of a server that proxies writes in a thread of its own:
// the main thread (the calls streaming through the proxy) goes on while turns
// are joined, judged and written; the thread judges exactly as the main
// thread would, prices included, and sees what other connections wrote.
import { afterEach, describe, expect, it } from 'vitest';
import type { TurnEvent } from '../../src/core/types.js';
import { evaluateEvents } from '../../src/core/stream.js';
import { SERVICE_DETECTION } from '../../src/prices/index.js';
import { openStore as openStoreOf } from '../../src/store/open.js';
import type { Store, WriteResult } from '../../src/store/store.js';
import { MINUTE, SEED_TOOLS, tools, turn, usage } from '../core/scenario.js';
import { freshDb, openStore } from '../store-under-test.js';

const opened: Store[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((store) => store.close()));
});

async function threadedStore(db: string): Promise<Store> {
  const store = await openStoreOf(db, SERVICE_DETECTION, { writeThread: { priceOverrides: {}, stderr: () => {} } });
  opened.push(store);
  return store;
}

/** How many times the main thread's event loop came round while `work` ran. */
async function loopsDuring(work: () => Promise<unknown>): Promise<number> {
  let loops = 0;
  let done = false;
  const spin = () => {
    if (done) return;
    loops++;
    setImmediate(spin);
  };
  setImmediate(spin);
  await work();
  done = true;
  return loops;
}

/** 4,000 sessions of three turns: a cold start, a hit, and a break from re-ordered tools. */
function workload(): TurnEvent[] {
  return Array.from({ length: 4_000 }, (_, i) => {
    const sessionId = `sess_${i}`;
    return [
      turn(`r${i}a`, { sessionId, usage: usage(0, 48_000) }),
      turn(`r${i}b`, { sessionId, at: MINUTE, usage: usage(48_000, 500) }),
      turn(`r${i}c`, { sessionId, at: 2 * MINUTE, tools: tools([...SEED_TOOLS].reverse()), usage: usage(0, 48_500) }),
    ];
  }).flat();
}

describe("a store's writes in a thread of their own", () => {
  it('leave the main thread free while they run, and judge (and price) as the main thread does', async () => {
    const events = workload();
    const threaded = await threadedStore(await freshDb('threaded'));
    const inline = await openStore(await freshDb('inline'));
    // Made here, a write holds the event loop until it is done; in the thread, the loop goes on.
    expect(await loopsDuring(() => inline.write([{ project: 'default', events }]))).toBe(0);
    let result: WriteResult | undefined;
    expect(await loopsDuring(async () => (result = await threaded.write([{ project: 'default', events }])))).toBeGreaterThan(0);

    const breaks = result!.breaks.map((b) => b.record);
    expect(breaks).toHaveLength(4_000);
    expect(breaks[0]).toMatchObject({ reason: 'tools_order_changed', previousRequestId: 'r0b' });
    // Priced by the service's price database, built in the thread from the same overrides.
    expect(breaks[0]!.estimatedExtraCostUsd).toBeGreaterThan(0);
    const reference = evaluateEvents(events.slice(0, 3), SERVICE_DETECTION).find((e) => e.break)!.break!;
    expect(breaks[0]!.estimatedExtraCostUsd).toBe(reference.estimatedExtraCostUsd);
    expect(await threaded.sessionTurns('default', 'sess_7')).toEqual(await inline.sessionTurns('default', 'sess_7'));
  });

  it("judge each turn against the true previous turn when another connection wrote between them", async () => {
    const db = await freshDb('shared');
    const threaded = await threadedStore(db);
    const other = await openStore(db);
    await threaded.write([{ project: 'default', events: [turn('t1', { usage: usage(0, 48_000) }), turn('t2', { at: MINUTE, usage: usage(48_000, 500) })] }]);
    // The other connection re-orders the tools; the thread's cached tail of the stream no longer holds.
    await other.write([{ project: 'default', events: [turn('t3', { at: 2 * MINUTE, tools: tools([...SEED_TOOLS].reverse()), usage: usage(0, 48_500) })] }]);
    await threaded.write([{ project: 'default', events: [turn('t4', { at: 3 * MINUTE, tools: tools([...SEED_TOOLS].reverse()), usage: usage(0, 48_800) })] }]);
    const stored = (await threaded.sessionTurns('default', 'sess_A'))!.map((t) => [t.requestId, t.state, t.break?.reason ?? null, t.break?.previousRequestId ?? null]);
    expect(stored).toEqual([
      ['t1', 'cold', null, null],
      ['t2', 'hit', null, null],
      ['t3', 'miss', 'tools_order_changed', 't2'],
      ['t4', 'miss', 'likely_provider_ttl_or_eviction', 't3'],
    ]);
  });

  it('fails a write as retryable once the store is closed, and its thread is gone', async () => {
    const threaded = await threadedStore(await freshDb('closed'));
    await threaded.close();
    const failed = await threaded.write([{ project: 'default', events: [turn('t1')] }]).catch((error: unknown) => error);
    expect(failed).toMatchObject({ status: 503 });
    expect(threaded.classifyError(failed)).not.toBe('data');
  });
});
