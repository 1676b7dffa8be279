// Runs a drizzle select straight through better-sqlite3. On the thousands of
// rows a dashboard series reads, drizzle's per-field row mapping costs as
// much as the query itself. Only for selections of plain SQL expressions and
// columns without a decoder (no boolean or JSON modes).
import type Database from 'better-sqlite3';

interface Select<R> {
  toSQL(): { sql: string; params: unknown[] };
  all(): R[];
}

/** The rows .all() would return; `keys` are the selection's keys, in order. */
export function allRows<R>(sqlite: Database.Database, query: Select<R>, keys: readonly string[]): R[] {
  const { sql, params } = query.toSQL();
  const rows = sqlite.prepare(sql).raw(true).all(...params) as unknown[][];
  return rows.map((values) => {
    const row: Record<string, unknown> = {};
    for (let i = 0; i < keys.length; i++) row[keys[i]!] = values[i];
    return row as R;
  });
}
