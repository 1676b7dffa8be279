// Volatile prefix parts (core/insights/volatile.ts defines them), from the
// records of the breaks that change tools or system blocks.
import { volatileParts, type VolatilePart } from '../core/insights/volatile.js';
import { readAll } from '../store/paging.js';
import type { Filters, Store, TimeRange } from '../store/store.js';

export async function readVolatileParts(store: Store, project: string, range: TimeRange, filters: Filters, limit: number): Promise<VolatilePart[]> {
  const breaks = await readAll((page) => store.breaks(project, range, { ...filters, reason: ['tools_schema_changed', 'system_changed'] }, page));
  return volatileParts(breaks, limit);
}
