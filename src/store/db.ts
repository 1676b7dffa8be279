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
}

export function openDatabase(path: string, options: OpenOptions = {}): OpenedDatabase {
  const sqlite = new Database(path, { readonly: options.readonly ?? false });
  // Readers never wait for the writer in WAL mode; a committed transaction is
  // in the WAL before the response is sent, so a killed process loses nothing.
  if (!options.readonly) sqlite.pragma('journal_mode = WAL');
  sqlite.pragma(`synchronous = ${options.synchronous ?? 'normal'}`);
  sqlite.pragma('busy_timeout = 5000');
  // The dedupe and stream indexes are written at random places: keep their pages in memory (64 MiB;
  // a reader, which reads rollups and single sessions, needs far less), and checkpoint every ~40 MiB
  // of WAL rather than every 4 MiB (each checkpoint syncs the file); with a background checkpointer,
  // only past ~400 MiB.
  sqlite.pragma(options.readonly ? 'cache_size = -16384' : 'cache_size = -65536');
  sqlite.pragma(`wal_autocheckpoint = ${options.backgroundCheckpoint ? 100_000 : 10_000}`);
  const db = drizzle(sqlite, { schema });
  if (!options.readonly) migrate(db, { migrationsFolder: MIGRATIONS_FOLDER });
  return { sqlite, db };
}
