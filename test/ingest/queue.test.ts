// Back-pressure: events waiting to be written are bounded by --queue-limit;
// past it a request is refused whole with 429 and Retry-After, stores
// nothing, and the queue takes requests again once it has drained. Requests
// written together while the database is closed are each told to retry
// (503), none refused as bad events.
import { describe, expect, it } from 'vitest';
import { Pipeline } from '../../src/ingest/pipeline.js';
import { Counters } from '../../src/telemetry/counters.js';
import { createLogger } from '../../src/telemetry/logfmt.js';
import { turn, usage } from '../core/scenario.js';
import { storeUnderTest } from '../store-under-test.js';

const batch = (tag: string, n: number) => Array.from({ length: n }, (_, i) => turn(`${tag}-${i}`, { sessionId: tag, at: i * 1000, usage: usage(0, 9_000) }));

describe('the ingest queue', () => {
  it('refuses what would take it past its limit, and takes requests again once written', async () => {
    const store = await storeUnderTest();
    const pipeline = new Pipeline(store, new Counters(), createLogger(() => {}), { queueLimit: 1_000 });
    // Arriving together: the first waits to be written when the second comes.
    const first = pipeline.ingest('default', batch('a', 600), 'http');
    const second = pipeline.ingest('default', batch('b', 600), 'http');
    const third = pipeline.ingest('default', batch('c', 400), 'http');
    await expect(second).rejects.toMatchObject({
      status: 429,
      retryAfter: 1,
      message: 'the ingest queue is full (600 events waiting, --queue-limit 1000); nothing from this request was stored',
    });
    expect(await first).toEqual({ accepted: 600, duplicates: 0 });
    expect(await third).toEqual({ accepted: 400, duplicates: 0 });
    expect(await store.sessionTurns('default', 'b')).toBeNull();
    expect(await pipeline.ingest('default', batch('b', 600), 'http')).toEqual({ accepted: 600, duplicates: 0 });
    // A request larger than the limit is taken when nothing waits: it could never be taken otherwise.
    expect(await pipeline.ingest('default', batch('d', 1_500), 'http')).toEqual({ accepted: 1_500, duplicates: 0 });
  });

  it('answers every request of a group 503 when the database is closed', async () => {
    const store = await storeUnderTest();
    const pipeline = new Pipeline(store, new Counters(), createLogger(() => {}), { queueLimit: 1_000 });
    await store.close();
    // Arriving together: written as one group.
    const replies = await Promise.allSettled(['a', 'b', 'c'].map((tag) => pipeline.ingest('default', batch(tag, 5), 'http')));
    for (const reply of replies) {
      expect(reply.status).toBe('rejected');
      expect((reply as PromiseRejectedResult).reason).toMatchObject({ status: 503, retryAfter: 5 });
    }
  });
});
