// The sums reads select from streams, sessions and rollups, as SQL that every
// backend runs: a row's own sums, or the sums over the rows of a group, and
// the time buckets and groups rollups are summed by.
import { sql, type Column, type SQL } from 'drizzle-orm';
import type { GroupBy } from './store.js';
import type { SummedRow } from './summaries.js';

type SummedKey = keyof SummedRow;
export type SummedColumns = Record<SummedKey, Column>;
const SUMMED: SummedKey[] = ['turns', 'breaks', 'unmeasuredInput', 'uncached', 'read', 'write', 'write1h', 'output', 'missed', 'extraCostMicroUsd', 'unpriced'];

/** The sums of one row. */
export function ownSums(t: SummedColumns): Record<SummedKey, SQL<number>> {
  return Object.fromEntries(SUMMED.map((key) => [key, sql<number>`${t[key]}`])) as Record<SummedKey, SQL<number>>;
}

/** The sums over a group's rows (0 over none). */
export function groupSums(t: SummedColumns): Record<SummedKey, SQL<number>> {
  return Object.fromEntries(SUMMED.map((key) => [key, sumOf(t[key])])) as Record<SummedKey, SQL<number>>;
}

export function sumOf(column: Column): SQL<number> {
  return sql<number>`coalesce(sum(${column}), 0)`;
}

/** The whole minutes of a stats interval (at least one). */
export function bucketMinutes(intervalMs: number): number {
  return Math.max(1, Math.round(intervalMs / 60_000));
}

/**
 * A bucket of `minutes` minutes, as its start in epoch ms. Inlined, not bound:
 * better-sqlite3 binds numbers as REAL, which would make this a float division.
 */
export function bucketOf(minute: Column, minutes: number): SQL<number> {
  return sql<number>`(${minute} / ${sql.raw(String(minutes))}) * ${sql.raw(String(minutes * 60_000))}`;
}

/** The rollup column a grouping groups by: a label id, or the reason. */
export function groupColumnOf(r: { modelId: Column; providerId: Column; agentId: Column; reason: Column; state: Column }, groupBy: GroupBy): SQL<number | string> {
  return sql<number | string>`${{ model: r.modelId, provider: r.providerId, agentId: r.agentId, reason: r.reason, state: r.state }[groupBy]}`;
}
