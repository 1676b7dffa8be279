import { DEFAULT_PRICES, type PriceTable } from './prices.js';

/** Everything detection can be tuned with (SPEC §4.2, §4.7). */
export interface DetectionOptions {
  /** A miss must lose at least this many tokens of cache read. */
  minMissTokens: number;
  /** …and read less than this share of what was expected. */
  missRatio: number;
  prices: PriceTable;
}

/** The defaults match the detector Claude Code ships (2000 tokens, 0.95). */
export const DEFAULT_DETECTION: DetectionOptions = Object.freeze({
  minMissTokens: 2000,
  missRatio: 0.95,
  prices: DEFAULT_PRICES,
});
