// A fresh PostgreSQL database per test file, on the server every session and
// CI run has (127.0.0.1:5432, trust auth). CACHEBREAK_TEST_PG names another
// server's maintenance database. A server that does not answer fails the test:
// the PostgreSQL store is part of what CI proves.
import { randomBytes } from 'node:crypto';
import { createPool, type SqlPool } from '../src/store/pg/client.js';

export const TEST_PG_ADMIN = process.env.CACHEBREAK_TEST_PG ?? 'postgres://postgres@127.0.0.1:5432/test';

export interface TestDatabase {
  /** Its connection URL, for --db. */
  url: string;
  /** Drops it (after every connection to it is closed). */
  drop(): Promise<void>;
}

function withDatabase(admin: string, name: string): string {
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return url.toString();
}

/** Creates an empty database named for this process. */
export async function freshDatabase(label = 'test'): Promise<TestDatabase> {
  const name = `cb_${label.replace(/[^a-z0-9]/gi, '').toLowerCase().slice(0, 20)}_${process.pid}_${randomBytes(4).toString('hex')}`;
  const admin = createPool(TEST_PG_ADMIN, { max: 1, connectTimeout: 5 });
  try {
    await admin.unsafe(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  return {
    url: withDatabase(TEST_PG_ADMIN, name),
    async drop() {
      const again = createPool(TEST_PG_ADMIN, { max: 1, connectTimeout: 5 });
      try {
        await again.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await again.end();
      }
    },
  };
}

/** Throws, saying what to do, when the test server does not answer within a few seconds. */
export async function assertReachable(): Promise<void> {
  const admin = createPool(TEST_PG_ADMIN, { max: 1, connectTimeout: 5 });
  try {
    await admin`SELECT 1`;
  } catch (error) {
    throw new Error(
      `the postgres test project needs a PostgreSQL server at ${TEST_PG_ADMIN} (${(error as Error).message}): ` +
        `start it (pg_ctlcluster 15 main start), or set CACHEBREAK_TEST_PG to another server's maintenance database URL`,
    );
  } finally {
    await admin.end();
  }
}

/**
 * Ends every connection to the database of `url` and to no other (what a
 * restart or a failover does to a node's connections); returns how many.
 * Each backend has exited when it returns (up to 5 s each), so that a client
 * sees its connections closed before the test's next request.
 */
export async function terminateBackends(url: string): Promise<number> {
  const admin = createPool(TEST_PG_ADMIN, { max: 1, connectTimeout: 5 });
  try {
    return await terminateOn(admin, url, null);
  } finally {
    await admin.end();
  }
}

async function terminateOn(admin: SqlPool, url: string, spare: number | null): Promise<number> {
  const name = new URL(url).pathname.slice(1);
  return (await admin`SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity WHERE datname = ${name} AND pid <> pg_backend_pid() AND pid IS DISTINCT FROM ${spare}`).length;
}

/**
 * terminateBackends while a query is in flight: the `turns` table is locked
 * first, and the connections end once one waits on a lock (within 5 s), so
 * that a write meets a terminated connection, not only idle ones do.
 * Returns how many ended and how many were waiting.
 */
export async function terminateMidQuery(url: string): Promise<{ terminated: number; waiting: number }> {
  const name = new URL(url).pathname.slice(1);
  const admin = createPool(TEST_PG_ADMIN, { max: 1, connectTimeout: 5 });
  const locker = createPool(url, { max: 1, connectTimeout: 5 });
  try {
    return await locker.begin(async (tx) => {
      const [own] = await tx<{ pid: number }[]>`SELECT pg_backend_pid() AS pid`;
      await tx`LOCK TABLE turns IN ACCESS EXCLUSIVE MODE`;
      let waiting = 0;
      for (const end = Date.now() + 5_000; waiting === 0 && Date.now() < end; await new Promise((resolve) => setTimeout(resolve, 10))) {
        waiting = (await admin<{ n: number }[]>`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = ${name} AND wait_event_type = 'Lock'`)[0]!.n;
      }
      return { terminated: await terminateOn(admin, url, own!.pid), waiting };
    });
  } finally {
    await locker.end();
    await admin.end();
  }
}
