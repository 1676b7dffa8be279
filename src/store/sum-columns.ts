// The sums reads select from streams, sessions and rollups, as SQL that every
// backend runs: a row's own sums, or the sums over the rows of a group.
import { sql, type Column, type SQL } from 'drizzle-orm';
import type { SummedRow } from './summaries.js';

type SummedKey = keyof SummedRow;
const SUMMED: SummedKey[] = ['turns', 'breaks', 'unmeasuredInput', 'uncached', 'read', 'write', 'write1h', 'output', 'missed', 'extraCostMicroUsd', 'unpriced'];

/** The sums of one row. */
export function ownSums(t: Record<SummedKey, Column>): Record<SummedKey, SQL<number>> {
  return Object.fromEntries(SUMMED.map((key) => [key, sql<number>`${t[key]}`])) as Record<SummedKey, SQL<number>>;
}

/** The sums over a group's rows (0 over none). */
export function groupSums(t: Record<SummedKey, Column>): Record<SummedKey, SQL<number>> {
  return Object.fromEntries(SUMMED.map((key) => [key, sumOf(t[key])])) as Record<SummedKey, SQL<number>>;
}

export function sumOf(column: Column): SQL<number> {
  return sql<number>`coalesce(sum(${column}), 0)`;
}
