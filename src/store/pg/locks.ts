// Transaction-scoped advisory locks that serialise writers of the same data
// across every process sharing the database: a session (all its streams and
// its sessions row), a request (its turn, before its session is known), a
// token series. Each transaction takes its locks in one statement in one
// global order (ascending key), so two transactions never wait on each other
// in a cycle; a lock found to be missing later is only tried, never waited for.
import type { Sql } from './client.js';
import { hashString } from '../../core/hash.js';

/** A 64-bit lock key, as PostgreSQL's signed bigint in decimal. */
export type LockKey = string;

function keyOf(parts: (string | number)[]): LockKey {
  return BigInt.asIntN(64, BigInt('0x' + hashString(parts.join('\u0000')))).toString();
}

export const sessionLock = (projectId: number, sessionId: string): LockKey => keyOf(['session', projectId, sessionId]);
export const requestLock = (projectId: number, requestId: string): LockKey => keyOf(['request', projectId, requestId]);
export const seriesLock = (projectId: number, series: string): LockKey => keyOf(['series', projectId, series]);
/** A project's waiting OTLP join halves: one pairing at a time, so that two halves never both wait. */
export const halvesLock = (projectId: number): LockKey => keyOf(['halves', projectId]);

/** Retention runs on one process at a time: whoever holds this (session-level) lock. */
export const RETENTION_LOCK: LockKey = keyOf(['retention']);

function ordered(keys: Iterable<LockKey>): LockKey[] {
  return [...new Set(keys)].sort((a, b) => {
    const x = BigInt(a);
    const y = BigInt(b);
    return x < y ? -1 : x > y ? 1 : 0;
  });
}

/** Waits for every lock, in the global order. */
export async function lockAll(tx: Sql, keys: Iterable<LockKey>): Promise<void> {
  const list = ordered(keys);
  if (list.length === 0) return;
  await tx`SELECT pg_advisory_xact_lock(k) FROM unnest(${list}::bigint[]) WITH ORDINALITY AS u(k, i) ORDER BY i`;
}

/** Tries locks taken out of order; returns those another transaction holds (not taken). */
export async function tryLocks(tx: Sql, keys: Iterable<LockKey>): Promise<LockKey[]> {
  const list = ordered(keys);
  if (list.length === 0) return [];
  const rows = await tx<{ k: string; ok: boolean }[]>`
    SELECT k::text AS k, pg_try_advisory_xact_lock(k) AS ok FROM unnest(${list}::bigint[]) AS k`;
  return rows.filter((r) => !r.ok).map((r) => r.k);
}

/**
 * Thrown inside a transaction that found it needs locks it could not take
 * without waiting out of order: the transaction is rolled back and run again
 * with them in its first, ordered set.
 */
export class MoreLocks extends Error {
  constructor(readonly keys: LockKey[]) {
    super('the transaction needs more locks');
  }
}

/** Deadlock detected or serialization failure: the transaction is safe to run again. */
export function retryable(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return code === '40P01' || code === '40001';
}
