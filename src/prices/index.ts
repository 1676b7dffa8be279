// Where detection's prices come from (SPEC §4.10): the config's overrides,
// then the genai-prices database.
import { DEFAULT_DETECTION, type DetectionOptions } from '../core/options.js';
import type { PriceLookup } from '../core/prices.js';
import { databasePrices } from './database.js';
import { withOverrides, type PriceOverrides } from './overrides.js';

export { DATABASE_PROVIDER_IDS, databasePrices, databaseProviderId, fromDatabasePrice } from './database.js';
export { MEMO_CAPACITY, memoised } from './memo.js';
export { bareModelId, parsePriceOverrides, PriceOverrideError, withOverrides, type PriceOverrides } from './overrides.js';

/** The prices detection uses: the overrides first, the database for every other model. */
export function priceLookup(overrides: PriceOverrides = {}): PriceLookup {
  return withOverrides(overrides, databasePrices);
}

/** Detection as the service runs it unless configured otherwise: the core's thresholds, priced from the database. */
export const SERVICE_DETECTION: DetectionOptions = Object.freeze({ ...DEFAULT_DETECTION, prices: databasePrices });
