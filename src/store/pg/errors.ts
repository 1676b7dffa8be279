// What an error of the PostgreSQL store says: the one place its errors are
// classified. The server's errors carry a SQLSTATE; the connection's (refused,
// reset, ended by the server, timed out) come from the driver without one.
import pg from 'pg';
import type { StoreErrorKind } from '../store.js';

/**
 * SQLSTATE classes of a value the database refuses: data exceptions (22: out
 * of range, a NUL byte in text), integrity constraints (23), a trigger's
 * RAISE (P0), a row past a limit (54).
 */
const DATA = new Set(['22', '23', 'P0', '54']);

/**
 * SQLSTATE classes of a database that cannot serve now: connection (08),
 * login refused (28), no such database (3D), transaction rollback (40:
 * serialization, deadlock), insufficient resources (53: no connection left,
 * disk full), operator intervention (57: shutting down, terminated, starting
 * up), an object not ready (55: a database not accepting connections, a lock
 * not available), system errors (58), and a read-only transaction (25006: a standby,
 * default_transaction_read_only).
 */
const UNAVAILABLE = new Set(['08', '28', '3D', '40', '53', '55', '57', '58']);

/** What the driver says of a connection that failed, was ended, or timed out; and of the pool once closed. */
const CONNECTION =
  /^(Connection terminated|timeout expired|timeout exceeded when trying to connect|Client has encountered a connection error|Client was closed|Cannot use a pool after calling end|Query read timeout)/;

/** Thrown by the store when the database did not answer in time. */
export class NoAnswer extends Error {}

export function classifyPgError(error: unknown): StoreErrorKind | undefined {
  // drizzle wraps the driver's error in its own ("Failed query: …"), as its cause.
  for (let e = error, depth = 0; e !== undefined && e !== null && depth < 3; e = (e as { cause?: unknown }).cause, depth++) {
    const kind = classifyOne(e);
    if (kind !== undefined) return kind;
  }
  return undefined;
}

function classifyOne(error: unknown): StoreErrorKind | undefined {
  if (error instanceof pg.DatabaseError) {
    const code = error.code ?? '';
    if (DATA.has(code.slice(0, 2))) return 'data';
    if (UNAVAILABLE.has(code.slice(0, 2)) || code === '25006') return 'unavailable';
    return undefined;
  }
  // Thrown by the program over what it was given, never by the database's state.
  if (error instanceof TypeError || error instanceof RangeError) return 'data';
  if (error instanceof NoAnswer || (error instanceof Error && CONNECTION.test(error.message))) return 'unavailable';
  // A socket's: refused, reset, unreachable, a name that does not resolve.
  const socket = error as { code?: unknown; syscall?: unknown } | null;
  if (typeof socket?.code === 'string' && typeof socket.syscall === 'string') return 'unavailable';
  return undefined;
}
