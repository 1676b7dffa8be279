// Fan-out cold starts (core/insights/fanout.ts defines them), from the cold
// turns the Store reads, priced with the prices detection uses.
import { fanOuts, type FanOuts } from '../core/insights/fanout.js';
import type { PriceLookup } from '../core/prices.js';
import type { Filters, Store, TimeRange } from '../store/store.js';

/** Cold turns read at most: a stream's first turn each, so far more than any range's streams. */
export const MAX_COLD_TURNS = 200_000;

export async function readFanOuts(store: Store, prices: PriceLookup, project: string, range: TimeRange, filters: Filters, limit: number): Promise<FanOuts> {
  return fanOuts(await store.coldTurns(project, range, filters, MAX_COLD_TURNS), prices, limit);
}
