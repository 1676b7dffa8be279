// SPEC §4.10: the extra cost of a break. Prices come from outside the core (a
// maintained price database, overridable in config); a model without a known
// price costs null, never $0.
import type { CachingMode } from './caching.js';

/** USD per million tokens. */
export interface ModelPrice {
  input: number;
  cacheRead: number;
  /** A 5-minute cache write (explicit caching). */
  cacheWrite: number;
  /** A 1-hour cache write. */
  cacheWrite1h: number;
}

/** The price of a model, or undefined when it is not known. */
export type PriceLookup = (model: string, provider: string | undefined) => ModelPrice | undefined;

export const NO_PRICES: PriceLookup = () => undefined;

/**
 * What the missed tokens cost beyond a cache read. Explicit caching wrote them
 * again, but only as many as the turn wrote: the part written at 1h at the 1h
 * price, the rest of its writes at 5m, and whatever it did not write (caching
 * turned off, or a prefix too short to cache) as plain input; when the usage
 * does not report writes, all of them at 5m. Automatic caching paid them as
 * plain input.
 */
export function extraCostUsd(price: ModelPrice, missed: number, mode: CachingMode, written: { write: number; write1h: number; writeReported?: boolean }): number {
  let microUsd: number;
  if (mode === 'automatic') {
    microUsd = missed * (price.input - price.cacheRead);
  } else {
    const at1h = Math.min(missed, written.write1h);
    const at5m = written.writeReported !== false ? Math.min(missed - at1h, Math.max(0, written.write - written.write1h)) : missed - at1h;
    const asInput = missed - at1h - at5m;
    microUsd = at1h * (price.cacheWrite1h - price.cacheRead) + at5m * (price.cacheWrite - price.cacheRead) + asInput * (price.input - price.cacheRead);
  }
  // Micro-dollars: the unit aggregates sum exactly.
  return Math.round(microUsd) / 1_000_000;
}
