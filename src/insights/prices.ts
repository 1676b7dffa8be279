// The prices the insights' dollar figures use: detection's, as configured.
import type { PriceLookup } from '../core/prices.js';
import { SERVICE_DETECTION } from '../prices/index.js';

/** The prices given, or the price database's (what detection uses unless configured otherwise). */
export function insightPrices(prices: PriceLookup | undefined): PriceLookup {
  return prices ?? SERVICE_DETECTION.prices;
}
