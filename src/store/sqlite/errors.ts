// What an error of the SQLite store says: the one place its errors are classified.
import type { StoreErrorKind } from '../store.js';

/** Result codes of a database that cannot serve now: locked by another, full, read-only, out of memory. */
const UNAVAILABLE = /^SQLITE_(BUSY|LOCKED|FULL|READONLY|IOERR|CANTOPEN|NOMEM)/;
/** Result codes of a value the database refuses: a constraint (a trigger's RAISE too), a type, a size. */
const DATA = /^SQLITE_(CONSTRAINT|MISMATCH|TOOBIG|RANGE)/;

export function classifySqliteError(error: unknown): StoreErrorKind | undefined {
  const code = String((error as { code?: unknown } | null)?.code ?? '');
  if (UNAVAILABLE.test(code)) return 'unavailable';
  if (DATA.test(code)) return 'data';
  // better-sqlite3's TypeError for a connection already closed (the server stopping): the write is retried, its events are not bad.
  if (error instanceof TypeError && /connection is not open/.test(error.message)) return 'unavailable';
  // Thrown by the program over what it was given (a value it cannot bind), never by the database's state.
  if (error instanceof TypeError || error instanceof RangeError) return 'data';
  return undefined;
}
