// Lookups are memoised by (model, provider): model ids come from the wire, so
// the memo is bounded, dropping its oldest entry when full.
import type { ModelPrice, PriceLookup } from '../core/prices.js';

/** How many (model, provider) answers a memo keeps. */
export const MEMO_CAPACITY = 1024;

/** The lookup, asked at most once per (model, provider) while the answer stays among the `capacity` newest. */
export function memoised(lookup: PriceLookup, capacity = MEMO_CAPACITY): PriceLookup {
  if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError(`memo capacity must be a whole number ≥ 1, got ${capacity}`);
  const memo = new Map<string, ModelPrice | undefined>();
  return (model, provider) => {
    // Unambiguous: a known provider's key starts with its length, an unknown one's with "~".
    const key = provider === undefined ? `~${model}` : `${provider.length}:${provider}${model}`;
    if (memo.has(key)) return memo.get(key);
    const price = lookup(model, provider);
    if (memo.size >= capacity) memo.delete(memo.keys().next().value!);
    memo.set(key, price);
    return price;
  };
}
