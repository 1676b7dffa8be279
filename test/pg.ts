// A fresh PostgreSQL database per test file, on the server every session and
// CI run has (127.0.0.1:5432, trust auth). CACHEBREAK_TEST_PG names another
// server's maintenance database. A server that does not answer fails the test:
// the PostgreSQL store is part of what CI proves.
import { randomBytes } from 'node:crypto';
import { createPool } from '../src/store/pg/client.js';

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
 */
export async function terminateBackends(url: string): Promise<number> {
  const admin = createPool(TEST_PG_ADMIN, { max: 1, connectTimeout: 5 });
  try {
    const name = new URL(url).pathname.slice(1);
    const rows = await admin`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = ${name} AND pid <> pg_backend_pid()`;
    return rows.length;
  } finally {
    await admin.end();
  }
}
