// Sums of dollars over breaks or turns, kept in micro-dollars so that they add
// exactly, with the ones that have no known price counted apart (SPEC §4.10:
// an unknown price is never $0).

/** Dollars over several items: the priced sum, and how many had no price. */
export interface Priced {
  /** The sum over the priced items; null when there are items and none has a price. */
  usd: number | null;
  /** Items with no known price: not in usd. */
  unpriced: number;
}

export const MICRO = 1_000_000;

/** A running sum in micro-dollars. */
export class Tally {
  microUsd = 0;
  items = 0;
  unpriced = 0;

  /** One item: its dollars, or null when its price is unknown. */
  add(usd: number | null): void {
    this.items++;
    if (usd === null) this.unpriced++;
    else this.microUsd += Math.round(usd * MICRO);
  }

  /** Sums already in micro-dollars (rollups), over `items` of which `unpriced` had no price. */
  addMicro(microUsd: number, items: number, unpriced: number): void {
    this.microUsd += microUsd;
    this.items += items;
    this.unpriced += unpriced;
  }

  get priced(): Priced {
    return pricedOf(this.items, this.microUsd, this.unpriced);
  }
}

/** No figure at all when every item is unpriced; $0 only when nothing needed one. */
export function pricedOf(items: number, microUsd: number, unpriced: number): Priced {
  return { usd: items > 0 && unpriced >= items ? null : microUsd / MICRO, unpriced };
}
