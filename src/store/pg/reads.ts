// Placeholder for the PostgreSQL store's reads, written apart (PgReads); every
// read says it is not available yet.
import type { PostgresJsDatabase } from 'drizzle-orm/postgres-js';
import type postgres from 'postgres';
import type { Store } from '../store.js';

type Reads = Pick<
  Store,
  | 'breaks' | 'sessions' | 'recentSessionIds' | 'changedTools' | 'breakPrefixes' | 'sessionTurns' | 'stats' | 'totals'
  | 'breakCauses' | 'waitingUsage' | 'storedCounts' | 'externalBreaks'
>;

const missing = async (..._args: unknown[]): Promise<never> => {
  throw new Error('reads from PostgreSQL are not implemented yet');
};

export class PgReads implements Reads {
  constructor(
    readonly client: postgres.Sql,
    readonly db?: PostgresJsDatabase,
  ) {}

  breaks = missing;
  sessions = missing;
  recentSessionIds = missing;
  changedTools = missing;
  breakPrefixes = missing;
  sessionTurns = missing;
  stats = missing;
  totals = missing;
  breakCauses = missing;
  waitingUsage = missing;
  storedCounts = missing;
  externalBreaks = missing;
}
