// Which store the store-level and end-to-end tests run against: SQLite (the
// `sqlite` project of vitest.config.ts) or PostgreSQL (the `postgres` project,
// CACHEBREAK_TEST_STORE=postgres). A test asks here for a fresh database and
// for stores on it and never names the kind itself, unless its subject is one
// store's own behaviour. Stores are closed and databases removed after the
// test (or, for a file's shared database, after the file).
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createPool, type SqlPool } from '../src/store/pg/client.js';
import Database from 'better-sqlite3';
import { afterAll, afterEach } from 'vitest';
import { SERVICE_DETECTION } from '../src/prices/index.js';
import { isPostgresUrl, openStore as openStoreOf } from '../src/store/open.js';
import type { Store } from '../src/store/store.js';
import { freshDatabase } from './pg.js';

export type StoreKind = 'sqlite' | 'postgres';

function kindOf(value: string | undefined): StoreKind {
  if (value === undefined || value === '' || value === 'sqlite') return 'sqlite';
  if (value === 'postgres') return 'postgres';
  throw new Error(`CACHEBREAK_TEST_STORE=${value}: expected sqlite or postgres`);
}

export const STORE_KIND: StoreKind = kindOf(process.env.CACHEBREAK_TEST_STORE);

/**
 * Connections one store or server of a test opens to PostgreSQL: every test
 * file running at once shares the server's 100 connections.
 */
export const PG_POOL = 2;

export { isPostgresUrl };

/** The flags `serve` gets beside `--db db`: a small pool for PostgreSQL (other commands keep a pool of 2). */
export function serveArgs(db: string): string[] {
  return isPostgresUrl(db) ? ['--pg-pool', String(PG_POOL)] : [];
}

type Lifetime = 'test' | 'file';

interface Owned {
  stores: Store[];
  /** Removes a database: drops it, or deletes its directory. */
  removals: (() => Promise<void>)[];
}

const owned: Record<Lifetime, Owned> = { test: { stores: [], removals: [] }, file: { stores: [], removals: [] } };

async function release(lifetime: Lifetime): Promise<void> {
  const mine = owned[lifetime];
  for (const store of mine.stores.splice(0)) await store.close();
  for (const remove of mine.removals.splice(0)) await remove();
}

// Registered before test/e2e/server.ts's hooks (which import this module), so
// with vitest's stacked hooks servers are killed before their database goes.
afterEach(() => release('test'));
afterAll(() => release('file'));

/** A new empty database of the kind under test, and how to remove it. */
async function createDb(label: string): Promise<{ db: string; remove(): Promise<void> }> {
  if (STORE_KIND === 'postgres') {
    const database = await freshDatabase(label);
    return { db: database.url, remove: () => database.drop() };
  }
  const dir = mkdtempSync(join(tmpdir(), 'cachebreak-db-'));
  return { db: join(dir, `${label}.db`), remove: async () => rmSync(dir, { recursive: true, force: true }) };
}

/** As the commands open --db, with a small pool. */
function newStore(db: string): Promise<Store> {
  return openStoreOf(db, SERVICE_DETECTION, { pgPool: PG_POOL });
}

/**
 * A new empty database of the kind under test, as `--db` takes it: a file in
 * a new directory, or a PostgreSQL URL. Removed after the test, or after the
 * last test of the file for 'file'.
 */
export async function freshDb(label = 'test', lifetime: Lifetime = 'test'): Promise<string> {
  const { db, remove } = await createDb(label);
  owned[lifetime].removals.push(remove);
  return db;
}

/** A store on `db` (from freshDb, or a file of the test's own), of its kind; closed after the test. */
export async function openStore(db: string, lifetime: Lifetime = 'test'): Promise<Store> {
  const store = await newStore(db);
  owned[lifetime].stores.push(store);
  return store;
}

/** A store on a fresh database of the kind under test, closed (and the database removed) after the test. */
export async function storeUnderTest(): Promise<Store> {
  return openStore(await freshDb('store'));
}

/**
 * A PostgreSQL database for the property runs of a file, emptied before
 * each: every row of every table deleted (triggers off, so no sum is kept
 * for rows going away) and every id sequence restarted, as in a fresh
 * migrated database. Creating and migrating a database per run, or a
 * TRUNCATE, takes longer than most runs.
 */
let runs: { url: string; sql: SqlPool } | undefined;

async function emptiedPgDb(): Promise<string> {
  if (runs === undefined) {
    const url = await freshDb('runs', 'file');
    const sql = createPool(url, { max: 1, connectTimeout: 5 });
    runs = { url, sql };
    owned.file.removals.unshift(async () => {
      runs = undefined;
      await sql.end();
    });
  }
  const { sql } = runs;
  const tables = await sql<{ name: string }[]>`
    SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`;
  const sequences = await sql<{ name: string }[]>`SELECT sequence_name AS name FROM information_schema.sequences WHERE sequence_schema = current_schema()`;
  await sql.begin(async (tx) => {
    await tx`SET LOCAL session_replication_role = replica`;
    for (const { name } of tables) await tx.unsafe(`DELETE FROM "${name}"`);
    for (const { name } of sequences) await tx`SELECT setval(${name}::regclass, 1, false)`;
  });
  return runs.url;
}

/**
 * Runs `body` on a new store on an empty database, then closes it: for
 * property tests, whose many runs must neither see each other's data nor
 * each hold a connection pool until the test ends. SQLite: a new file each
 * run, removed after it.
 */
export async function withFreshStore<T>(body: (store: Store) => Promise<T>): Promise<T> {
  const created = STORE_KIND === 'postgres' ? { db: await emptiedPgDb(), remove: async () => {} } : await createDb('run');
  const store = await newStore(created.db);
  try {
    return await body(store);
  } finally {
    await store.close();
    await created.remove();
  }
}

/**
 * Everything a database holds, as text, for privacy checks: every file of a
 * SQLite database (the WAL and shared memory beside it included), or every
 * column of every table of a PostgreSQL database, byte strings as their bytes.
 */
export async function storedText(db: string): Promise<string> {
  if (!isPostgresUrl(db)) {
    const dir = dirname(db);
    const bytes = readdirSync(dir).map((file) => readFileSync(join(dir, file)).toString('latin1')).join('\n');
    return Buffer.from(bytes, 'latin1').toString('utf8');
  }
  const sql = createPool(db, { max: 1, connectTimeout: 5 });
  try {
    const columns = await sql<{ table: string; column: string; type: string }[]>`
      SELECT table_name AS table, column_name AS column, data_type AS type FROM information_schema.columns
      WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position`;
    const tables = new Map<string, string[]>();
    for (const { table, column, type } of columns) {
      const value = type === 'bytea' ? `encode("${column}", 'escape')` : `"${column}"::text`;
      tables.set(table, [...(tables.get(table) ?? []), value]);
    }
    const parts: string[] = [];
    for (const [table, values] of tables) {
      const rows = await sql.unsafe<{ text: string | null }[]>(`SELECT concat_ws(E'\\n', ${values.join(', ')}) AS text FROM "${table}"`);
      parts.push(...rows.map((row) => row.text ?? ''));
    }
    return parts.join('\n');
  } finally {
    await sql.end();
  }
}

export type Statement = [text: string, params?: unknown[]];

/**
 * Runs statements on `db` as another program would, each kind its own
 * dialect: SQLite's on a file, PostgreSQL's ($1 placeholders) on a URL.
 */
export async function runOn(db: string, statements: { sqlite: Statement[]; postgres: Statement[] }): Promise<void> {
  if (!isPostgresUrl(db)) {
    const sqlite = new Database(db);
    try {
      for (const [text, params = []] of statements.sqlite) sqlite.prepare(text).run(...params);
    } finally {
      sqlite.close();
    }
    return;
  }
  const sql = createPool(db, { max: 1, connectTimeout: 5 });
  try {
    for (const [text, params = []] of statements.postgres) await sql.unsafe(text, params);
  } finally {
    await sql.end();
  }
}

/**
 * Makes the database refuse every new turn whose request id is LIKE
 * `pattern`, inside the writer's transaction, with `message`: a real failure
 * of the store for those events alone (another program's trigger).
 */
export function refuseTurns(db: string, pattern: string, message: string): Promise<void> {
  return runOn(db, {
    sqlite: [[`CREATE TRIGGER refuse BEFORE INSERT ON turns WHEN NEW.request_id LIKE '${pattern}' BEGIN SELECT RAISE(ABORT, '${message}'); END`]],
    postgres: [
      [`CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN IF NEW.request_id LIKE '${pattern}' THEN RAISE EXCEPTION '${message}'; END IF; RETURN NEW; END $$`],
      ['CREATE TRIGGER refuse BEFORE INSERT ON turns FOR EACH ROW EXECUTE FUNCTION refuse()'],
    ],
  });
}
