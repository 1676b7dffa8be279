// TTL advice (core/insights/ttl.ts defines it), read through the Store's
// gapRows and priced with the prices detection uses.
import { ttlAdvice, type TtlAdvice } from '../core/insights/ttl.js';
import type { PriceLookup } from '../core/prices.js';
import type { Filters, Store, TimeRange } from '../store/store.js';

export async function readTtlAdvice(store: Store, prices: PriceLookup, project: string, range: TimeRange, filters: Filters, limit: number): Promise<TtlAdvice> {
  return ttlAdvice(await store.gapRows(project, range, filters), prices, limit);
}
