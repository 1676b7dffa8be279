// Insight 4, TTL advice: for each stream (session and agent) and model, the idle gaps between its
// requests against the 5-minute and 1-hour cache tiers, and what writing at
// the other tier would have saved or cost over the turns actually observed.
//
// Definitions (docs/insights.md#ttl-advice):
// - A gap is the time from when a turn's cache entry was last refreshed (its
//   start, plus its time to first token up to an hour, as SPEC §4.5 measures
//   it) to the next turn's start in the same stream; both report cache usage.
//   A stream's first such turn has none. Gaps are kept per hour of the later
//   turn's start (gap_rollups): a range is read in whole hours.
// - At a gap the turn's *stake* is what it could read of the previous turn's
//   cache: min(previous read + write, this read + write). Under the 1-hour
//   tier a gap of 5 minutes to 1 hour still reads the stake; under the
//   5-minute tier it writes it again. Shorter gaps read under both tiers,
//   longer ones write again under both.
// - Its *rewritten* part is the stake it did not read (stake − read, at least
//   0): tokens written again that the other tier would not have written.
// - Over a group, with S the stake at gaps of 5 minutes to 1 hour, R their
//   rewritten part and W every token written, the writes that either tier
//   makes are W − R, and writing at 1 hour instead of 5 minutes saves
//     S × (5m write − read price) − (W − R) × (1h write − 5m write price)
//   (negative: it costs). The group writes at 1 hour now when most of what it
//   wrote was written at 1 hour; the advice is the tier that comes out cheaper.
// Only explicit caching has tiers to choose: groups that wrote nothing are
// left out. A model without a known price gets no figure (SPEC §4.10).
import { MAX_FLIGHT_MS } from '../history.js';
import type { ModelPrice, PriceLookup } from '../prices.js';
import type { Turn } from '../types.js';

export const FIVE_MINUTES = 5 * 60_000;
export const ONE_HOUR = 60 * 60_000;

/** Where a gap falls: none (a first turn), up to 5 minutes, up to an hour, longer. */
export const GAP_BUCKETS = ['first', 'within_5m', 'within_1h', 'over_1h'] as const;
export type GapBucket = (typeof GAP_BUCKETS)[number];

/** Turns of one stream and model whose gap fell in one bucket, summed (what the store reads). */
export interface GapRow {
  sessionId: string;
  agentId: string;
  model: string;
  provider: string;
  bucket: GapBucket;
  turns: number;
  /** Sum of the stake at these gaps. */
  stake: number;
  /** Sum of the stake not read. */
  rewritten: number;
  /** Every token these turns wrote, and the part written at 1 hour. */
  written: number;
  written1h: number;
}

export type Tier = '5m' | '1h';

export interface TtlGroup {
  sessionId: string;
  agentId: string;
  model: string;
  provider: string;
  /** Turns by gap bucket. */
  gaps: Record<GapBucket, number>;
  /** The tier most of its writes used. */
  currentTier: Tier;
  /** The cheaper tier over what was observed; the current one when they cost the same. */
  advisedTier: Tier;
  /** Tokens read at gaps of 5 minutes to 1 hour under 1 h that 5 m would write again. */
  stakeTokens: number;
  writtenTokens: number;
  /** What writing at 1 hour instead of 5 minutes saved (negative: cost); null when the model has no known price. */
  oneHourSavesUsd: number | null;
  /** What following the advice would have saved against the current tier: 0 when the advice is the current tier; null when unpriced. */
  adviceSavesUsd: number | null;
}

export interface TtlAdvice {
  /** The first `limit` groups, most saved first. */
  groups: TtlGroup[];
  /** Every group, not only the ones listed. */
  groupCount: number;
  /** Groups advised to change tier, all of them. */
  changeCount: number;
  /** The sum of adviceSavesUsd over the priced groups. */
  adviceSavesUsd: number;
  /** Groups whose model has no known price. */
  unpricedGroups: number;
}

/** Where a gap of `gapMs` falls (null: no gap). */
export function gapBucket(gapMs: number | null): GapBucket {
  if (gapMs === null) return 'first';
  return gapMs <= FIVE_MINUTES ? 'within_5m' : gapMs <= ONE_HOUR ? 'within_1h' : 'over_1h';
}

/** What one turn that reported cache usage adds to its stream's gaps. */
export interface TurnGap {
  bucket: GapBucket;
  stake: number;
  rewritten: number;
}

/** Whether a turn takes part in the gaps: it has usage that reported cache fields. */
export function hasGap(turn: Turn): boolean {
  return turn.usage?.cacheReported === true;
}

/**
 * A turn's gap from `previous`, the stream's last earlier turn that reported
 * cache usage (undefined: none, a first turn). Both must report cache usage.
 */
export function turnGap(previous: Turn | undefined, turn: Turn): TurnGap {
  const usage = turn.usage!;
  if (previous === undefined) return { bucket: 'first', stake: 0, rewritten: 0 };
  const before = previous.usage!;
  // Refreshed when it started answering, as SPEC §4.5 measures a gap; a turn known only from its usage, at its start.
  const refreshed = previous.ts + (previous.prefix === undefined ? 0 : Math.min(previous.ttftMs ?? 0, MAX_FLIGHT_MS));
  const stake = Math.min(before.read + before.write, usage.read + usage.write);
  return { bucket: gapBucket(Math.max(0, turn.ts - refreshed)), stake, rewritten: Math.max(0, stake - usage.read) };
}

/** Micro-dollars, rounded once, so that figures add exactly. */
const micro = (tokens: number, usdPerMillion: number) => tokens * usdPerMillion;

/** What 1 h saves over 5 m for stake S, rewritten R and written W (in micro-dollars before rounding). */
export function oneHourSaves(price: ModelPrice, stake: number, rewritten: number, written: number): number {
  const saved = micro(stake, price.cacheWrite - price.cacheRead) - micro(written - rewritten, price.cacheWrite1h - price.cacheWrite);
  return Math.round(saved) / 1_000_000;
}

/** A group's identity, and its order among equal savings. */
const groupKey = (g: Pick<TtlGroup, 'sessionId' | 'agentId' | 'model' | 'provider'>) => `${g.sessionId}\u0000${g.agentId}\u0000${g.model}\u0000${g.provider}`;

export function ttlAdvice(rows: readonly GapRow[], prices: PriceLookup, limit: number): TtlAdvice {
  const groups = new Map<string, TtlGroup & { written1h: number; rewritten: number }>();
  for (const row of rows) {
    const key = groupKey(row);
    let g = groups.get(key);
    if (!g) {
      g = {
        sessionId: row.sessionId, agentId: row.agentId, model: row.model, provider: row.provider,
        gaps: { first: 0, within_5m: 0, within_1h: 0, over_1h: 0 },
        currentTier: '5m', advisedTier: '5m', stakeTokens: 0, writtenTokens: 0, oneHourSavesUsd: null, adviceSavesUsd: null,
        written1h: 0, rewritten: 0,
      };
      groups.set(key, g);
    }
    g.gaps[row.bucket] += row.turns;
    if (row.bucket === 'within_1h') {
      g.stakeTokens += row.stake;
      g.rewritten += row.rewritten;
    }
    g.writtenTokens += row.written;
    g.written1h += row.written1h;
  }
  const out: TtlGroup[] = [];
  let total = 0;
  let unpriced = 0;
  for (const { written1h, rewritten, ...g } of groups.values()) {
    if (g.writtenTokens === 0) continue;
    g.currentTier = written1h * 2 > g.writtenTokens ? '1h' : '5m';
    const price = prices(g.model, g.provider || undefined);
    if (price === undefined) {
      unpriced++;
      g.advisedTier = g.currentTier;
    } else {
      const saves = oneHourSaves(price, g.stakeTokens, rewritten, g.writtenTokens);
      g.oneHourSavesUsd = saves;
      g.advisedTier = saves > 0 ? '1h' : saves < 0 ? '5m' : g.currentTier;
      g.adviceSavesUsd = g.advisedTier === g.currentTier ? 0 : Math.abs(saves);
      total += Math.round(g.adviceSavesUsd * 1_000_000);
    }
    out.push(g);
  }
  // What following the advice saves, most first; then by name.
  const keyed = out.map((g) => ({ g, key: groupKey(g) }));
  keyed.sort((a, b) => (b.g.adviceSavesUsd ?? -1) - (a.g.adviceSavesUsd ?? -1) || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const changeCount = out.filter((g) => g.advisedTier !== g.currentTier).length;
  return { groups: keyed.slice(0, limit).map((k) => k.g), groupCount: out.length, changeCount, adviceSavesUsd: total / 1_000_000, unpricedGroups: unpriced };
}
