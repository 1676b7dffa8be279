// Insight 5, chronic misses: streams that write (or pay full input) on most
// turns and rarely read, with the likely cause named from their snapshots.
//
// Definitions (docs/insights.md#chronic-misses):
// - A stream is chronic when at least CHRONIC_MIN_TURNS of its turns reported
//   cache usage and its cache rate, read / (uncached + read + write), is below
//   CHRONIC_MAX_RATE over its whole life (a stream seen in the range).
//   Ranked by the input it did not read (uncached + write), most first.
// - The likely cause, from its newest CHRONIC_SNAPSHOTS turns, the first
//   rule that holds:
//   1. below_minimum: no turn's input reached the model's minimum cacheable
//      length (core/caching.ts).
//   2. no_breakpoint: explicit caching, and no turn wrote or read anything:
//      nothing asked for a cache entry.
//   3. leading_volatile_block: the first block of the prefix (the first
//      system block, or the tool list when there is no system) differs
//      between most consecutive snapshots: every request starts with a
//      prefix no other had, which defeats automatic caching and any marker.
//   4. lookback_exceeded: in most consecutive snapshots, no message marker of
//      the newest request reaches the previous request's last one (each lies
//      before it, or more than the model's lookback in content blocks past
//      it, SPEC §4.12): the lookup from each breakpoint cannot reach the
//      entry written before.
//   5. unknown: none of these; the stream's breaks say more.
import { reachingMarker } from '../attribution.js';
import { breakpointsOf, cachingMode, minCacheable } from '../caching.js';
import type { Prefix, Usage } from '../types.js';

export const CHRONIC_MIN_TURNS = 4;
export const CHRONIC_MAX_RATE = 0.2;
/** The newest turns of a chronic stream whose snapshots are read to name a cause. */
export const CHRONIC_SNAPSHOTS = 20;

export const CHRONIC_CAUSES = ['below_minimum', 'no_breakpoint', 'leading_volatile_block', 'lookback_exceeded', 'unknown'] as const;
export type ChronicCause = (typeof CHRONIC_CAUSES)[number];

export const CAUSE_ADVICE: Record<ChronicCause, string> = {
  below_minimum: 'The prompt is shorter than the model caches: nothing to gain unless it grows past the minimum.',
  no_breakpoint: 'No cache_control marker: add one at the end of the stable prefix (tools and system), and one on the latest message.',
  leading_volatile_block: 'The first block changes on every request: move what changes (a clock, an id) to the end of the prompt.',
  lookback_exceeded: 'More than 20 blocks between breakpoints: add a marker every 20 blocks, or on each message of a long tool loop.',
  unknown: 'No known pattern: look at the breaks of this stream.',
};

/** One turn of a stream as the rules see it. */
export interface StreamSnapshot {
  ts: number;
  model: string | null;
  provider: string | null;
  prefix: Prefix | null;
  usage: Usage | null;
}

/** Most of n transitions (more than half). */
const most = (hits: number, n: number) => n > 0 && hits * 2 > n;

function leadingBlock(prefix: Prefix): string | undefined {
  return prefix.systemBlockHashes?.[0] ?? prefix.toolsHash;
}

/** The likely cause of a chronic stream, from its snapshots in any order. */
export function chronicCause(snapshots: readonly StreamSnapshot[], minCacheableOverrides: Readonly<Record<string, number>> = {}): ChronicCause {
  const turns = [...snapshots].sort((a, b) => a.ts - b.ts);
  const measured = turns.filter((t): t is StreamSnapshot & { usage: Usage } => t.usage !== null && t.usage.cacheReported);
  if (measured.length === 0) return 'unknown';
  const input = (u: Usage) => u.uncached + u.read + u.write;
  const minimum = (t: StreamSnapshot) => minCacheable(t.provider ?? undefined, t.model ?? undefined, minCacheableOverrides);
  if (measured.every((t) => input(t.usage) < minimum(t))) return 'below_minimum';
  if (measured.every((t) => cachingMode(t.usage, t.provider ?? undefined) === 'explicit' && t.usage.read === 0 && t.usage.write === 0)) return 'no_breakpoint';
  const prefixes = turns.flatMap((t) => (t.prefix ? [t.prefix] : []));
  const pairs = prefixes.slice(1).map((b, i) => [prefixes[i]!, b] as const);
  const leading = pairs.filter(([a, b]) => leadingBlock(a) !== undefined && leadingBlock(a) !== leadingBlock(b)).length;
  if (most(leading, pairs.length)) return 'leading_volatile_block';
  const far = pairs.filter(([a, b]) => reachingMarker(a, b, breakpointsOf(a.model).lookbackBlocks) === null).length;
  if (most(far, pairs.length)) return 'lookback_exceeded';
  return 'unknown';
}
