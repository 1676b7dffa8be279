// The PostgreSQL store's work rides through its connections being
// terminated mid-call (a database restart or failover): retention, which
// holds a session-level advisory lock, and writes, which hold transaction
// advisory locks, fail as 'unavailable' (never anything thrown past their
// promise: vitest fails a run on an uncaught error), the locks end with their
// sessions, and the next calls work on new connections.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SERVICE_DETECTION } from '../../src/prices/index.js';
import { createPool } from '../../src/store/pg/client.js';
import { PgStore } from '../../src/store/pg/store.js';
import { turn, usage } from '../core/scenario.js';
import { freshDatabase, TEST_PG_ADMIN, terminateBackends, type TestDatabase } from '../pg.js';

let database: TestDatabase;
let store: PgStore;

beforeAll(async () => {
  database = await freshDatabase('pgterm');
  store = await PgStore.open(database.url, SERVICE_DETECTION, { pool: 2 });
});

afterAll(async () => {
  await store?.close();
  await database?.drop();
});

/** Advisory locks held in this test's database, by any session. */
async function advisoryLocks(): Promise<number> {
  const admin = createPool(TEST_PG_ADMIN, { max: 1, connectTimeout: 5 });
  try {
    const [row] = await admin<{ n: number }[]>`
      SELECT count(*)::int AS n FROM pg_locks l JOIN pg_database d ON d.oid = l.database
      WHERE l.locktype = 'advisory' AND d.datname = ${new URL(database.url).pathname.slice(1)}`;
    return row!.n;
  } finally {
    await admin.end();
  }
}

/** 50 turns of one session, from long ago: retention deletes them. */
const oldTurns = (round: number) =>
  Array.from({ length: 50 }, (_, i) => turn(`r${round}_${i}`, { sessionId: `s${round}`, at: i * 1000, usage: usage(40_000, 0) }));

async function retried<T>(call: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (error) {
      if (attempt === 5 || store.classifyError(error) !== 'unavailable') throw error;
    }
  }
}

describe('the PostgreSQL store, its connections terminated mid-call', () => {
  it('fails retention and writes as unavailable, leaves no advisory lock behind, and works again at once', { timeout: 60_000 }, async () => {
    const failures: unknown[] = [];
    for (let round = 0; round < 8; round++) {
      // A connection ended in the round before may still be in the pool until its end is read: sent again, as a client does.
      await retried(() => store.write([{ project: 'default', events: oldTurns(round) }]));
      const now = Date.now();
      const calls = Promise.allSettled([store.prune({ turnsBefore: now, rollupsBefore: now }), store.write([{ project: 'default', events: oldTurns(100 + round) }])]);
      await new Promise((resolve) => setTimeout(resolve, round % 4));
      await terminateBackends(database.url);
      for (const outcome of await calls) if (outcome.status === 'rejected') failures.push(outcome.reason);
    }
    expect(failures.length).toBeGreaterThan(0);
    for (const failure of failures) expect(store.classifyError(failure), String(failure)).toBe('unavailable');

    // Every lock ended with its session: a retention run now takes its lock and deletes every old turn.
    await expect.poll(advisoryLocks, { timeout: 5_000 }).toBe(0);
    await retried(() => store.prune({ turnsBefore: Date.now(), rollupsBefore: Date.now() }));
    for (let round = 0; round < 8; round++) {
      expect(await store.sessionTurns('default', `s${round}`)).toBeNull();
      expect(await store.sessionTurns('default', `s${100 + round}`)).toBeNull();
    }
    await expect(store.ping()).resolves.toBeUndefined();
  });
});
