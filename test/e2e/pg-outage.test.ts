// A `serve` node on PostgreSQL rides through its database going away: its
// connections terminated (what a restart or a failover does), the network to
// it cut, the database read-only or refusing connections. Meanwhile ingest,
// reads and /readyz answer 503 with Retry-After (never a 200 that drops
// events as "rejected"), the node never exits, it reconnects by itself, and
// every acknowledged event is stored. Only this test's own database is
// touched (pg_terminate_backend filtered by its name).
import { appendFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createPool } from '../../src/store/pg/client.js';
import { tempDir } from '../helpers.js';
import { turn } from '../ingest/requests.js';
import { deliver, randomEvents, resultsOf, sessionsIn, smallBatches } from '../multi-node/cluster.js';
import { TEST_PG_ADMIN, terminateBackends, terminateMidQuery } from '../pg.js';
import { stall } from '../stall.js';
import { freshDb, runOn } from '../store-under-test.js';
import { T0 } from './events.js';
import { startRelay } from './relay.js';
import { postEvents, request, startServer, type Exit, type ServerProcess } from './server.js';

const admin = createPool(TEST_PG_ADMIN, { max: 1, connectTimeout: 5 });
afterAll(() => admin.end());

const nameOf = (db: string) => new URL(db).pathname.slice(1);

const terminate = terminateBackends;

/** Whether the process is still running. */
async function running(server: ServerProcess): Promise<boolean> {
  const exit = await Promise.race([server.exited, new Promise<'running'>((resolve) => setTimeout(() => resolve('running'), 100))]);
  return exit === 'running' || (expect.fail(`the node exited: ${JSON.stringify(exit as Exit)}\n${server.stderrLines.join('\n')}`) as never);
}

/** Every request id the turns of these sessions hold, sorted. */
async function storedIds(url: string, sessions: readonly string[]): Promise<string[]> {
  const results = await resultsOf(url, sessions);
  return Object.values(results.turns)
    .flat()
    .map((t) => t.requestId)
    .sort();
}

const idsOf = (events: readonly Record<string, unknown>[]) => [...new Set(events.map((e) => e.requestId as string))].sort();

async function expectUnavailable(reply: Awaited<ReturnType<typeof request>>): Promise<void> {
  expect(reply.status, reply.text).toBe(503);
  expect(reply.headers.get('retry-after')).toMatch(/^\d+$/);
  expect((reply.body as { error: { code: string } }).error.code).toBe('unavailable');
}

describe('a serve node on PostgreSQL', () => {
  it('rides through its backends being terminated mid-ingest, three times: 503 with Retry-After meanwhile, every acknowledged event stored, tail and retention on', { timeout: 120_000 }, async () => {
    const db = await freshDb('terminated');
    const tailed = join(tempDir(), 'events.ndjson');
    writeFileSync(tailed, '');
    const server = await startServer({ db, args: ['--pg-pool', '4', '--tail', tailed, '--retain', '3650d'] });
    const events = randomEvents(6, 40, 7);
    const batches = smallBatches(events, 5, 8);
    // Followed from a file while the backends go: its own request and session ids.
    const tailEvents = randomEvents(2, 40, 9).map((e) => ({ ...e, requestId: `t${String(e.requestId)}`, ...(typeof e.sessionId === 'string' ? { sessionId: `t${e.sessionId}` } : {}) }));

    const terminations: Promise<{ terminated: number; waiting: number }>[] = [];
    const at = [0.2, 0.45, 0.7].map((share) => Math.floor(batches.length * share));
    let appended = 0;
    let stop = false;
    const appending = (async () => {
      while (!stop && appended < tailEvents.length) {
        appendFileSync(tailed, tailEvents.slice(appended, appended + 5).map((e) => JSON.stringify(e) + '\n').join(''));
        appended += 5;
        await new Promise((resolve) => setTimeout(resolve, 40));
      }
    })();
    const delivering = deliver([server], batches, {
      inFlight: 8,
      seed: 10,
      isKilled: () => false,
      retries: 40,
      onAcknowledged(count) {
        if (at.includes(count)) terminations.push(terminateMidQuery(db));
      },
    });
    // A failed delivery stops the file's writer too, before the test's directory goes.
    const delivery = await delivering.catch(async (error: unknown) => {
      stop = true;
      await appending;
      throw error;
    });
    await appending;
    const terminated = await Promise.all(terminations);
    // Each time, a write was in flight on a connection that ended.
    expect(terminated).toHaveLength(3);
    for (const { terminated: ended, waiting } of terminated) expect([ended > 0, waiting > 0]).toEqual([true, true]);
    expect(await running(server)).toBe(true);
    // A write that met a terminated connection was written again at once (requests written together are retried one by one),
    // or answered 503 with Retry-After (deliver checks it) and said in the log.
    expect(server.stderrLines.some((line) => line.includes('event=store_unavailable'))).toBe(delivery.unavailable > 0);
    expect(server.stderrLines.filter((line) => /event=unhandled_error|level=fatal/.test(line))).toEqual([]);

    expect((await request(server.url, '/readyz')).status).toBe(200);
    expect(await storedIds(server.url, sessionsIn(events))).toEqual(idsOf(events));
    // The tailer retried what it could not store, and stored every line once the database was back.
    await expect.poll(() => storedIds(server.url, sessionsIn(tailEvents)), { timeout: 20_000, interval: 250 }).toEqual(idsOf(tailEvents));
    expect((await server.stop()).code).toBe(0);
  });

  it('answers /readyz 503 within seconds when the network to its database is cut, and is ready again once it is back', { timeout: 90_000 }, async () => {
    const target = new URL(TEST_PG_ADMIN);
    const relay = await startRelay({ host: target.hostname, port: Number(target.port || 5432) });
    try {
      const db = await freshDb('cut');
      const server = await startServer({ db: relay.through(db), args: ['--pg-pool', '2'] });
      const before = [turn('c1', 's_cut'), turn('c2', 's_cut', { ts: T0 + 1 })];
      expect((await postEvents(server.url, before)).status).toBe(200);
      expect((await request(server.url, '/readyz')).status).toBe(200);

      relay.cut();
      for (let i = 0; i < 3; i++) {
        const start = performance.now();
        const reply = await request(server.url, '/readyz');
        // The ping's deadline is 2 s; a loaded machine gets some slack.
        expect(performance.now() - start).toBeLessThan(5_000);
        await expectUnavailable(reply);
      }

      relay.restore();
      await expect.poll(async () => (await request(server.url, '/readyz')).status, { timeout: 20_000, interval: 250 }).toBe(200);
      const after = [turn('c3', 's_cut', { ts: T0 + 2 })];
      expect((await postEvents(server.url, after)).status).toBe(200);
      expect(await storedIds(server.url, ['s_cut'])).toEqual(['c1', 'c2', 'c3']);
      expect(await running(server)).toBe(true);
    } finally {
      await relay.close();
    }
  });

  it('stops within seconds on SIGTERM while a write waits on locked tables (it waited out the 30 s statement deadline)', { timeout: 60_000 }, async () => {
    const db = await freshDb('locked_stop');
    const server = await startServer({ db, args: ['--pg-pool', '2'] });
    expect((await postEvents(server.url, [turn('l1', 's_locked')])).status).toBe(200);
    const release = await stall(db);
    try {
      const hanging = postEvents(server.url, [turn('l2', 's_locked', { ts: T0 + 1 })]).then(
        (reply) => reply.status,
        () => 'no answer',
      );
      // The write is under way, waiting on a lock.
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      const start = performance.now();
      const exit = await server.stop();
      const stoppedMs = performance.now() - start;
      // Closing waits 3 s for the request, then 2 s for the write, then ends its connection.
      expect(stoppedMs).toBeLessThan(9_000);
      expect(exit).toEqual({ code: 0, signal: null });
      // Never acknowledged: the client is free to send it again.
      expect(await hanging).not.toBe(200);
    } finally {
      await release();
    }
  });

  it('stores once a write whose commit was answered on a connection that broke, and takes later writes whole', { timeout: 60_000 }, async () => {
    const target = new URL(TEST_PG_ADMIN);
    const relay = await startRelay({ host: target.hostname, port: Number(target.port || 5432) });
    try {
      const db = await freshDb('lostcommit');
      const server = await startServer({ db: relay.through(db), args: ['--pg-pool', '1'] });
      const batch = (tag: string) => Array.from({ length: 3 }, (_, i) => turn(`${tag}${i}`, `s_${tag}`, { ts: T0 + i }));
      expect((await postEvents(server.url, batch('a'))).body).toEqual({ accepted: 3, duplicates: 0, rejected: [] });
      // CommandComplete "COMMIT": the database committed; the node never hears it.
      relay.loseAnswer(Buffer.concat([Buffer.from([0x43, 0, 0, 0, 11]), Buffer.from('COMMIT\0')]));
      await expectUnavailable(await postEvents(server.url, batch('b')));
      // The ids the lost commit used are never handed out again.
      expect((await postEvents(server.url, batch('c'))).body).toEqual({ accepted: 3, duplicates: 0, rejected: [] });
      // Sent again as a client does after a 503: it was stored, once.
      expect((await postEvents(server.url, batch('b'))).body).toEqual({ accepted: 0, duplicates: 3, rejected: [] });
      expect(await storedIds(server.url, ['s_a', 's_b', 's_c'])).toEqual(['a0', 'a1', 'a2', 'b0', 'b1', 'b2', 'c0', 'c1', 'c2']);
    } finally {
      await relay.close();
    }
  });

  const eight = Array.from({ length: 8 }, (_, i) => turn(`ro${i}`, 's_ro', { ts: T0 + 0 + i }));

  it('answers 503 with Retry-After and stores nothing while its database is read-only, then stores once it is writable', { timeout: 60_000 }, async () => {
    const db = await freshDb('readonly');
    const server = await startServer({ db });
    const name = nameOf(db);
    // Read-only for the connections opened from now on: the node's are ended, so that it opens new ones.
    await admin.unsafe(`ALTER DATABASE "${name}" SET default_transaction_read_only = on`);
    await terminate(db);
    for (let i = 0; i < 2; i++) await expectUnavailable(await postEvents(server.url, eight));
    // Reads still work: nothing of the refused events was stored.
    expect((await request(server.url, '/v1/sessions/s_ro/turns')).status).toBe(404);
    expect(server.stderrLines.some((line) => line.includes('event=store_unavailable') && line.includes('code=25006'))).toBe(true);

    await admin.unsafe(`ALTER DATABASE "${name}" RESET default_transaction_read_only`);
    await terminate(db);
    const stored = await postEvents(server.url, eight);
    expect(stored.status, stored.text).toBe(200);
    expect(stored.body).toEqual({ accepted: 8, duplicates: 0, rejected: [] });
    expect(await storedIds(server.url, ['s_ro'])).toEqual(idsOf(eight));
  });

  it('answers 503 with Retry-After, storing nothing, to a failure of the database not known to be the events\' fault', { timeout: 60_000 }, async () => {
    const db = await freshDb('unknown');
    const server = await startServer({ db });
    // An internal error (SQLSTATE XX000) on one event: not a refusal of that event, so not reported as one in a 200.
    await runOn(db, {
      sqlite: [],
      postgres: [
        [`CREATE FUNCTION fail() RETURNS trigger LANGUAGE plpgsql AS $$
          BEGIN IF NEW.request_id = 'ro3' THEN RAISE EXCEPTION 'internal' USING ERRCODE = 'XX000'; END IF; RETURN NEW; END $$`],
        ['CREATE TRIGGER fail BEFORE INSERT ON turns FOR EACH ROW EXECUTE FUNCTION fail()'],
      ],
    });
    await expectUnavailable(await postEvents(server.url, eight));
    expect((await request(server.url, '/v1/sessions/s_ro/turns')).status).toBe(404);
  });

  it('answers 503 to ingest, reads and /readyz while its database refuses connections, and reconnects by itself', { timeout: 60_000 }, async () => {
    const db = await freshDb('refusing');
    const server = await startServer({ db });
    const name = nameOf(db);
    await admin.unsafe(`ALTER DATABASE "${name}" WITH ALLOW_CONNECTIONS false`);
    try {
      await terminate(db);
      await expectUnavailable(await postEvents(server.url, eight));
      await expectUnavailable(await request(server.url, '/v1/sessions'));
      await expectUnavailable(await request(server.url, '/readyz'));
    } finally {
      await admin.unsafe(`ALTER DATABASE "${name}" WITH ALLOW_CONNECTIONS true`);
    }
    await expect.poll(async () => (await request(server.url, '/readyz')).status, { timeout: 10_000, interval: 200 }).toBe(200);
    expect((await postEvents(server.url, eight)).body).toEqual({ accepted: 8, duplicates: 0, rejected: [] });
    expect(await running(server)).toBe(true);
  });
});
