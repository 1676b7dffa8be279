// SPEC §4.5: how long the baseline's prefix stays in the cache, and what an
// idle gap against it says. Explicit caching holds a prefix in the TTL tiers
// the requests declared or wrote (an OpenAI model's, in OpenAI's window);
// automatic caching in the provider's window.
import { automaticCaching, breakpointsOf, type Breakpoints, type CachingMode } from './caching.js';
import { parseDuration } from './duration.js';
import { modelFamily } from './family.js';
import { markerTtl, readMarker } from './position.js';
import type { BreakCause, Prefix, TtlSource, Usage } from './types.js';

const MINUTE = 60_000;
/** The TTLs a tier bit stands for; the flags above them say where tiers came from. */
const TIER_MS = [5 * MINUTE, 30 * MINUTE, 60 * MINUTE, 24 * 60 * MINUTE] as const;
const FIVE_MINUTES = 1 << 0;
const ONE_HOUR = 1 << 2;
const DECLARED = 1 << 4;
const WROTE_1H = 1 << 5;

/**
 * The tiers a prefix is held in, as bits (5m, 30m, 1h, 24h), with flags for
 * their source. A small integer, so that the store can keep it per turn.
 */
export type Tiers = number;

function tierBit(ttl: string | undefined): number {
  const ms = parseDuration(ttl);
  const index = TIER_MS.findIndex((tier) => tier === ms);
  return index < 0 ? 0 : 1 << index;
}

/** The tiers a prefix declares, remembered per prefix: stream turns share theirs. */
const declaredOf = new WeakMap<Prefix, Tiers>();

function declaredTiers(prefix: Prefix): Tiers {
  let declared = declaredOf.get(prefix);
  if (declared === undefined) {
    declared = 0;
    if (prefix.markers && prefix.markers.length > 0) {
      for (const name of prefix.markers) declared |= tierBit(markerTtl(readMarker(name)));
    } else if (prefix.ttlMs !== undefined) {
      const index = TIER_MS.findIndex((tier) => tier === prefix.ttlMs);
      if (index >= 0) declared = 1 << index;
    }
    declaredOf.set(prefix, declared);
  }
  return declared;
}

/** SPEC §4.5: 1h if declared or written at 1h, 5m if declared or written at 5m, or if nothing was declared. */
export function ownTiers(prefix: Prefix | undefined, usage: Usage): Tiers {
  const declared = prefix === undefined ? 0 : declaredTiers(prefix);
  let tiers = declared === 0 ? FIVE_MINUTES : declared | DECLARED;
  if (usage.write1h > 0) tiers |= ONE_HOUR | WROTE_1H;
  if (usage.write > usage.write1h) tiers |= FIVE_MINUTES;
  return tiers;
}

/** SPEC §4.12: a turn's own tiers, plus, when it also read, those of the latest earlier turn that wrote. */
export function tiersOf(prefix: Prefix | undefined, usage: Usage, writerBefore: Tiers): Tiers {
  return ownTiers(prefix, usage) | (usage.read > 0 ? writerBefore : 0);
}

export interface Retention {
  /** The shortest retention; null when unknown. */
  ttlMs: number | null;
  /** The longest; null when unknown or unbounded. */
  ttlMaxMs: number | null;
  ttlSource: TtlSource;
  /** Held in TTL tiers (an expiry is certain past the shortest) or in a provider's window (only past its longest). */
  held: Breakpoints['held'];
}

function explicitRetention(tiers: Tiers): Retention {
  let ttlMs = 0;
  let ttlMaxMs = 0;
  TIER_MS.forEach((ms, i) => {
    if ((tiers & (1 << i)) === 0) return;
    if (ttlMs === 0) ttlMs = ms;
    ttlMaxMs = ms;
  });
  const source: TtlSource = tiers & DECLARED ? 'declared' : tiers & WROTE_1H ? 'previous_1h_write' : 'provider_default';
  return { ttlMs, ttlMaxMs, ttlSource: source, held: 'tiers' };
}

/**
 * The retention of a baseline's prefix: its tiers with explicit caching
 * (unless its model's breakpoints are held in a window: an OpenAI model's,
 * writes reported or not), else its provider's window.
 */
export function retentionOf(
  mode: CachingMode,
  tiers: Tiers,
  baseline: { provider?: string; model?: string; prefix?: Prefix },
): Retention {
  if (mode === 'explicit' && breakpointsOf(baseline.model).held === 'tiers') return explicitRetention(tiers);
  const declared = baseline.prefix?.ttlMs;
  const family = baseline.model === undefined ? '' : modelFamily(baseline.model);
  const window = automaticCaching(baseline.provider).window(family, declared);
  if (!window) return { ttlMs: null, ttlMaxMs: null, ttlSource: 'unknown', held: 'window' };
  return { ttlMs: window.minMs, ttlMaxMs: window.maxMs, ttlSource: window.declared ? 'declared' : 'provider_default', held: 'window' };
}

/** SPEC §4.5: what the gap alone says; null when the retention is unknown. */
export function causeOfGap(gapMs: number, retention: Retention): { cause: BreakCause | null; partialExpiry: boolean } {
  const { ttlMs, ttlMaxMs } = retention;
  if (ttlMs === null) return { cause: null, partialExpiry: false };
  if (ttlMaxMs !== null && gapMs > ttlMaxMs) return { cause: 'ttl_expired', partialExpiry: false };
  if (gapMs <= ttlMs) return { cause: 'likely_server_eviction', partialExpiry: false };
  if (retention.held === 'window') return { cause: 'possible_ttl_expiry', partialExpiry: false };
  return { cause: 'ttl_expired', partialExpiry: ttlMaxMs !== null && ttlMaxMs > ttlMs };
}
