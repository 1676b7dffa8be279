// SPEC §5: cache rate = Σread / Σ(uncached + read + write), writes included,
// sum over sum, unreported turns left out, and "no data" distinct from 0.
import type { Usage } from './types.js';

export interface TokenSums {
  uncached: number;
  read: number;
  write: number;
  write1h: number;
  output: number;
  /** Turns whose usage reported cache fields. */
  turns: number;
}

export function emptySums(): TokenSums {
  return { uncached: 0, read: 0, write: 0, write1h: 0, output: 0, turns: 0 };
}

/** Adds a turn's usage to `sums` (in place); unreported usage adds nothing. */
export function addUsage(sums: TokenSums, usage: Usage): TokenSums {
  if (!usage.cacheReported) return sums;
  sums.uncached += usage.uncached;
  sums.read += usage.read;
  sums.write += usage.write;
  sums.write1h += usage.write1h;
  sums.output += usage.output;
  sums.turns += 1;
  return sums;
}

/** null when there is no input to measure: no data is not a 0% rate. */
export function cacheRate(sums: Pick<TokenSums, 'uncached' | 'read' | 'write'>): number | null {
  const denominator = sums.uncached + sums.read + sums.write;
  return denominator > 0 ? sums.read / denominator : null;
}
