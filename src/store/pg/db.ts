// Connects to a PostgreSQL database and brings its schema up to date. Many
// processes may start at once on one database: migrations run under an
// advisory lock, so that exactly one applies them and the others wait.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { drizzle, type NodePgDatabase } from 'drizzle-orm/node-postgres';
import { migrate } from 'drizzle-orm/node-postgres/migrator';
import pg from 'pg';
import { DatabaseUnusable } from '../db.js';
import { createPool, type SqlPool } from './client.js';
import * as schema from './schema.js';

/** Whether --db names a PostgreSQL database rather than a SQLite file. */
export function isPostgresUrl(db: string): boolean {
  return /^postgres(ql)?:\/\//i.test(db);
}

/** The URL without its password, to name in messages and logs. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return url.replace(/\/\/([^:/@]*):[^@]*@/, '//$1:***@');
  }
}

/** The package's migrations/pg folder, found upwards from this module (src/, dist/ or a benchmark build). */
function findMigrations(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(dir, 'migrations', 'pg');
    if (existsSync(join(candidate, 'meta', '_journal.json'))) return candidate;
    const parent = dirname(dir);
    if (parent === dir) throw new Error('cannot find the migrations/pg folder of the cachebreak package');
    dir = parent;
  }
}

export const PG_MIGRATIONS_FOLDER = findMigrations();

/** The advisory lock every process takes to migrate: "cachebreak" in ASCII. */
const MIGRATION_LOCK = 0x6361636865627265n;

export type PgDrizzle = NodePgDatabase<typeof schema>;

export interface PgOptions {
  /** Connections in this process's pool (default 10). */
  pool?: number;
}

export const DEFAULT_PG_POOL = 10;

/** Seconds to wait for a connection to open. */
const CONNECT_TIMEOUT = 10;

/**
 * A failure to reach or enter the server, said in one line with what to do;
 * undefined for any other error.
 */
export function unreachable(url: string, error: unknown): DatabaseUnusable | undefined {
  const reason = (error as Error).message;
  // The driver's own connection failures have a message and no code.
  const code = String((error as { code?: unknown }).code ?? (/^(timeout expired|Connection terminated)/.test(reason) ? 'CONNECT_TIMEOUT' : ''));
  const where = redactUrl(url);
  if (['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ETIMEDOUT', 'CONNECT_TIMEOUT', 'ECONNRESET'].includes(code)) {
    return new DatabaseUnusable(`cannot reach the PostgreSQL server of ${where} (${code}: ${reason}): start it, or fix the host and port in --db`, code, error);
  }
  if (code === '28P01' || code === '28000') {
    return new DatabaseUnusable(`PostgreSQL refused the login to ${where} (${reason}): fix the user and password in --db, or the server's pg_hba.conf`, code, error);
  }
  if (code === '3D000') {
    return new DatabaseUnusable(`the database of ${where} does not exist (${reason}): create it (createdb, or CREATE DATABASE) or fix its name in --db`, code, error);
  }
  if (code === '42501') {
    return new DatabaseUnusable(`the user of ${where} may not create cachebreak's tables (${reason}): grant it CREATE on the database (or its schema), or use its owner in --db`, code, error);
  }
  if (code === '53300') {
    return new DatabaseUnusable(`the PostgreSQL server of ${where} has no connection left (${reason}): lower --pg-pool on each process, or raise max_connections`, code, error);
  }
  return undefined;
}

export interface OpenedPg {
  sql: SqlPool;
  db: PgDrizzle;
}

/** Connects, migrates under the advisory lock, and returns the pool. Errors say what to do (DatabaseUnusable). */
export async function openPg(url: string, options: PgOptions = {}): Promise<OpenedPg> {
  try {
    new URL(url);
  } catch {
    throw new DatabaseUnusable(`--db ${redactUrl(url)} is not a URL: write postgres://user:password@host:5432/database`, 'BAD_URL', undefined);
  }
  const pool = options.pool ?? DEFAULT_PG_POOL;
  if (!Number.isInteger(pool) || pool < 1) throw new DatabaseUnusable(`--pg-pool must be a whole number of connections, at least 1 (got ${pool})`, 'BAD_POOL', undefined);
  await migrateLocked(url);
  const sql = createPool(url, { max: pool, connectTimeout: CONNECT_TIMEOUT });
  return { sql, db: drizzle({ client: sql.pool, schema }) };
}

/** Applies the pending migrations; one process at a time, whoever starts first. */
async function migrateLocked(url: string): Promise<void> {
  // One connection: the session lock and the migrations are on the same session.
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: CONNECT_TIMEOUT * 1000, application_name: 'cachebreak' });
  // Errors of the connection reach the statement that fails; without a listener they would also be thrown.
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query('SELECT pg_advisory_lock($1::bigint)', [MIGRATION_LOCK.toString()]);
    try {
      await migrate(drizzle({ client, schema }), { migrationsFolder: PG_MIGRATIONS_FOLDER });
    } finally {
      await client.query('SELECT pg_advisory_unlock($1::bigint)', [MIGRATION_LOCK.toString()]);
    }
  } catch (error) {
    throw unreachable(url, error) ?? error;
  } finally {
    await client.end();
  }
}
