// Opens the embedded SQLite database and brings its schema up to date.
import Database from 'better-sqlite3';
import { drizzle, type BetterSQLite3Database } from 'drizzle-orm/better-sqlite3';
import { migrate } from 'drizzle-orm/better-sqlite3/migrator';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as schema from './schema.js';

/** The package's migrations/ folder, found upwards from this module (src/, dist/ or a benchmark build). */
function findMigrations(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(dir, 'migrations');
    if (existsSync(join(candidate, 'meta', '_journal.json'))) return candidate;
    const parent = dirname(dir);
    if (parent === dir) throw new Error('cannot find the migrations/ folder of the cachebreak package');
    dir = parent;
  }
}

export const MIGRATIONS_FOLDER = findMigrations();

export type Drizzle = BetterSQLite3Database<typeof schema>;

export interface OpenedDatabase {
  sqlite: Database.Database;
  db: Drizzle;
}

export interface OpenOptions {
  /** `full` also survives power loss; `normal` (default) survives a killed process. */
  synchronous?: 'normal' | 'full';
  readonly?: boolean;
  /** Another thread checkpoints (see checkpointer.ts): this connection only does so as a last resort. */
  backgroundCheckpoint?: boolean;
  /**
   * Fail at once (DatabaseUnusable) when this process cannot write the file,
   * instead of opening it read-only and failing every write later.
   */
  mustWrite?: boolean;
}

/** The database file cannot be used as asked; the message says why and what to do. */
export class DatabaseUnusable extends Error {
  /** SQLite's result code (SQLITE_CANTOPEN, SQLITE_READONLY, …). */
  readonly code: string;

  constructor(message: string, code: string, cause: unknown) {
    super(message, { cause });
    this.name = 'DatabaseUnusable';
    this.code = code;
  }
}

function codeOf(error: unknown): string {
  return String((error as { code?: unknown }).code ?? '');
}

/**
 * The failures that mean "this process may not use this file", with what to
 * do; undefined for any other.
 */
function unusable(path: string, error: unknown): DatabaseUnusable | undefined {
  const code = codeOf(error);
  const reason = (error as Error).message;
  const user = typeof process.getuid === 'function' ? ` (uid ${process.getuid()})` : '';
  if (code === 'SQLITE_READONLY' || code.startsWith('SQLITE_READONLY_')) {
    return new DatabaseUnusable(
      `the database ${path} is read-only for this process${user} (${reason}): cachebreak writes to it. ` +
        `Make the file, and the directory it is in, writable by this user (SQLite writes ${path}-wal and ${path}-shm beside it), or point --db at a writable file`,
      code,
      error,
    );
  }
  if (code === 'SQLITE_BUSY' || code.startsWith('SQLITE_BUSY_')) {
    return new DatabaseUnusable(
      `the database ${path} is locked by another process (${reason}): stop the process that holds it (another program with the file open in a transaction), or point --db at another file`,
      code,
      error,
    );
  }
  if (code === 'SQLITE_NOTADB') {
    return new DatabaseUnusable(
      `${path} is not a SQLite database (${reason}), so cachebreak will not use it nor write over it. ` +
        `Point --db at a cachebreak database, or at a file name that does not exist yet to create one`,
      code,
      error,
    );
  }
  if (code === 'SQLITE_CANTOPEN' || code.startsWith('SQLITE_CANTOPEN_') || code === 'SQLITE_PERM') {
    return new DatabaseUnusable(
      `cannot open or create the database ${path}${user} (${reason}): its directory must exist and be writable by this user, ` +
        `for the file and its -wal and -shm files. Create the directory or fix its permissions, or point --db elsewhere`,
      code,
      error,
    );
  }
  return undefined;
}

/** How long a statement waits for another connection's lock before SQLITE_BUSY. */
export const BUSY_TIMEOUT_MS = 5_000;

/** SQLite's page cache of a connection that writes ingest (64 MiB, as a negative count of KiB), and of one that mostly reads (16 MiB). */
const WRITER_CACHE_SIZE = -65_536;
export const READER_CACHE_SIZE = -16_384;

/**
 * Whether this connection can write. A file SQLite had to open read-only still
 * begins a write transaction in WAL mode; only a write is refused
 * (SQLITE_READONLY). So the header's user_version is written with the value it
 * has, inside a transaction that is rolled back: nothing changes. A lock held
 * by another writer (SQLITE_BUSY) means the file is writable.
 */
function checkWritable(sqlite: Database.Database): void {
  sqlite.pragma('busy_timeout = 0');
  try {
    const version = Number(sqlite.pragma('user_version', { simple: true }));
    sqlite.exec('BEGIN IMMEDIATE');
    try {
      sqlite.pragma(`user_version = ${version}`);
    } finally {
      sqlite.exec('ROLLBACK');
    }
  } catch (error) {
    if (codeOf(error) !== 'SQLITE_BUSY') throw error;
  } finally {
    sqlite.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
  }
}

export function openDatabase(path: string, options: OpenOptions = {}): OpenedDatabase {
  // A reader has nothing to advise about writing: it keeps SQLite's error, unless the file is no database at all.
  const explain = (error: unknown) => (options.readonly && codeOf(error) !== 'SQLITE_NOTADB' ? undefined : unusable(path, error)) ?? error;
  // better-sqlite3 says only "the directory does not exist", as a TypeError with no code.
  const folder = dirname(path);
  if (path !== ':memory:' && !existsSync(folder)) {
    throw new DatabaseUnusable(`cannot create the database ${path}: the folder ${folder} does not exist. Create it (mkdir -p ${folder}) or point --db at a file in an existing folder`, 'SQLITE_CANTOPEN', undefined);
  }
  let sqlite: Database.Database;
  try {
    sqlite = new Database(path, { readonly: options.readonly ?? false });
  } catch (error) {
    throw explain(error);
  }
  try {
    return prepare(sqlite, options);
  } catch (error) {
    sqlite.close();
    throw explain(error);
  }
}

function prepare(sqlite: Database.Database, options: OpenOptions): OpenedDatabase {
  // Readers never wait for the writer in WAL mode; a committed transaction is
  // in the WAL before the response is sent, so a killed process loses nothing.
  if (!options.readonly) sqlite.pragma('journal_mode = WAL');
  sqlite.pragma(`synchronous = ${options.synchronous ?? 'normal'}`);
  sqlite.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
  // The dedupe and stream indexes are written at random places: keep their pages in memory (64 MiB;
  // a reader, which reads rollups and single sessions, needs far less), and checkpoint every ~40 MiB
  // of WAL rather than every 4 MiB (each checkpoint syncs the file); with a background checkpointer,
  // only past ~400 MiB.
  sqlite.pragma(`cache_size = ${options.readonly ? READER_CACHE_SIZE : WRITER_CACHE_SIZE}`);
  sqlite.pragma(`wal_autocheckpoint = ${options.backgroundCheckpoint ? 100_000 : 10_000}`);
  const db = drizzle(sqlite, { schema });
  if (options.mustWrite && !options.readonly) checkWritable(sqlite);
  if (!options.readonly) migrate(db, { migrationsFolder: MIGRATIONS_FOLDER });
  return { sqlite, db };
}
