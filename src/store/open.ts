// Which store --db names: a postgres:// (or postgresql://) URL is a PostgreSQL
// database that any number of cachebreak processes may share; anything else
// is a SQLite file.
import type { DetectionOptions } from '../core/options.js';
import type { OpenOptions } from './db.js';
import { isPostgresUrl, redactUrl } from './pg/db.js';
import { PgStore } from './pg/store.js';
import { SqliteStore } from './sqlite/store.js';
import type { Store } from './store.js';

export { isPostgresUrl };

/** Connections a one-off command (keys, report, import, tail, demo, reevaluate) keeps to PostgreSQL; --pg-pool is the server's. */
export const COMMAND_PG_POOL = 2;

export interface OpenStoreOptions {
  /** Connections of a PostgreSQL store's pool (--pg-pool). */
  pgPool?: number;
  /** How a SQLite file is opened. */
  sqlite?: OpenOptions;
}

/** Opens (and migrates) the store --db names. */
export async function openStore(db: string, detection: DetectionOptions, options: OpenStoreOptions = {}): Promise<Store> {
  if (isPostgresUrl(db)) return PgStore.open(db, detection, options.pgPool === undefined ? {} : { pool: options.pgPool });
  return new SqliteStore(db, detection, options.sqlite);
}

/** --db as it may be shown in logs and output: a URL without its password. */
export function shownDb(db: string): string {
  return isPostgresUrl(db) ? redactUrl(db) : db;
}
