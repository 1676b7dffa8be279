// Time buckets as the rollups group them: multiples of the interval since the epoch.
import type { Range } from './params.js';

/** Bucket starts that overlap [from, to), so that a series can say "no data" (null) where it has none. */
export function bucketStarts(range: Range, intervalMs: number): number[] {
  const starts: number[] = [];
  for (let ts = Math.floor(range.from / intervalMs) * intervalMs; ts < range.to; ts += intervalMs) starts.push(ts);
  return starts;
}
