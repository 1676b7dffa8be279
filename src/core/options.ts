import { NO_PRICES, type PriceLookup } from './prices.js';

/** Everything detection can be tuned with (SPEC §4.3, §4.10). */
export interface DetectionOptions {
  /** A miss must lose at least this many tokens of cache read. */
  minMissTokens: number;
  /** …and read less than this share of what was expected. */
  missRatio: number;
  /** Shortest prompt an automatic cache keeps, by provider ("openai", "deepseek"… or "other"), over the defaults. */
  minCacheable: Readonly<Record<string, number>>;
  prices: PriceLookup;
}

/** The thresholds match the detector Claude Code ships (2000 tokens, 0.95). No prices: the service supplies them. */
export const DEFAULT_DETECTION: DetectionOptions = Object.freeze({
  minMissTokens: 2000,
  missRatio: 0.95,
  minCacheable: Object.freeze({}),
  prices: NO_PRICES,
});
