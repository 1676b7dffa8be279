// A fresh PostgreSQL database per test file, on the server every session and
// CI run has (127.0.0.1:5432, trust auth). CACHEBREAK_TEST_PG names another
// server's maintenance database. A server that does not answer fails the test:
// the PostgreSQL store is part of what CI proves.
import { randomBytes } from 'node:crypto';
import postgres from 'postgres';

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
  const admin = postgres(TEST_PG_ADMIN, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  return {
    url: withDatabase(TEST_PG_ADMIN, name),
    async drop() {
      const again = postgres(TEST_PG_ADMIN, { max: 1, onnotice: () => {} });
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
  const admin = postgres(TEST_PG_ADMIN, { max: 1, connect_timeout: 5, onnotice: () => {} });
  try {
    await admin`SELECT 1`;
  } catch (error) {
    throw new Error(
      `the postgres test project needs a PostgreSQL server at ${TEST_PG_ADMIN} (${(error as Error).message}): ` +
        `start it (pg_ctlcluster 15 main start), or set CACHEBREAK_TEST_PG to another server's maintenance database URL`,
    );
  } finally {
    await admin.end({ timeout: 1 });
  }
}
