// Which store --db names: a postgres:// (or postgresql://) URL is a PostgreSQL
// database that any number of cachebreak processes may share; anything else
// is a SQLite file.
import type { DetectionOptions } from '../core/options.js';
import type { PriceOverrides } from '../prices/index.js';
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
  /** For a server that proxies: a SQLite store writes in a thread of its own (sqlite/write-thread.ts), judging with prices built from these overrides, as detection's are. */
  writeThread?: { priceOverrides: PriceOverrides; stderr: (line: string) => void };
}

/** Opens (and migrates) the store --db names. */
export async function openStore(db: string, detection: DetectionOptions, options: OpenStoreOptions = {}): Promise<Store> {
  if (isPostgresUrl(db)) return PgStore.open(db, detection, options.pgPool === undefined ? {} : { pool: options.pgPool });
  const store = new SqliteStore(db, detection, options.sqlite);
  // A database in memory is this connection's alone.
  if (!options.writeThread || db === ':memory:') return store;
  const { priceOverrides, stderr } = options.writeThread;
  const { prices, ...settings } = detection;
  try {
    await store.writeInThread({ path: db, ...(options.sqlite?.synchronous ? { synchronous: options.sqlite.synchronous } : {}), detection: settings, priceOverrides }, stderr);
  } catch (error) {
    await store.close();
    throw error;
  }
  return store;
}

/** --db as it may be shown in logs and output: a URL without its password. */
export function shownDb(db: string): string {
  return isPostgresUrl(db) ? redactUrl(db) : db;
}
