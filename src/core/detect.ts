// SPEC §4.1, §4.3 and §4.5: the state of a turn, judged against its baseline
// (the earlier turn whose cache entry it could read), and the break record of
// a miss.
import { attribute } from './attribution.js';
import { breakpointsOf, cachingMode, minCacheable, pricingMode, type CachingMode } from './caching.js';
import { MAX_FLIGHT_MS, type Seen } from './history.js';
import type { DetectionOptions } from './options.js';
import { extraCostUsd } from './prices.js';
import { causeOfGap, retentionOf } from './retention.js';
import type { BreakCause, BreakReason, BreakRecord, TurnState, Turn, Usage } from './types.js';

/** Reasons about where entries are written and looked up, not about the prefix's content (SPEC §4.12). */
const MARKER_REASONS: ReadonlySet<BreakReason> = new Set(['cache_control_changed', 'breakpoint_lookback_exceeded']);

/** A turn that has usage: the only kind that gets a state. */
export type MeasuredTurn = Turn & { usage: Usage };

export function totalInput(usage: Usage): number {
  return usage.uncached + usage.read + usage.write;
}

const modeOf = (turn: MeasuredTurn): CachingMode => cachingMode(turn.usage, turn.provider);

/** SPEC §4.3: what `turn` left in the cache. */
export function cachedBy(turn: MeasuredTurn, options: DetectionOptions): number {
  if (modeOf(turn) === 'explicit') return turn.usage.read + turn.usage.write;
  const total = totalInput(turn.usage);
  return total >= minCacheable(turn.provider, turn.model, options.minCacheable) ? total : 0;
}

/** An automatic cache does not keep (nor serve) a prompt below the provider's minimum. */
function belowMinimum(turn: MeasuredTurn, options: DetectionOptions): boolean {
  return totalInput(turn.usage) < minCacheable(turn.provider, turn.model, options.minCacheable);
}

export interface Judged {
  readonly state: TurnState;
  readonly break: BreakRecord | null;
}

/** The states without a break record, shared: most turns get one of these. */
const PLAIN = Object.fromEntries(
  (['unreported', 'expected', 'hit', 'uncached', 'cold'] as const).map((state) => [state, Object.freeze({ state, break: null })]),
) as Record<Exclude<TurnState, 'miss'>, Judged>;

/**
 * SPEC §4.1: the first state that applies, judged against the turn's
 * baseline; `afterCompaction`: it is the first main-stream turn after a
 * compaction (SPEC §4.9).
 */
export function judge(turn: MeasuredTurn, baseline: Seen | undefined, afterCompaction: boolean, options: DetectionOptions): Judged {
  const usage = turn.usage;
  if (!usage.cacheReported) return PLAIN.unreported;
  const mode = modeOf(turn);
  // With automatic caching, a prompt below the minimum cannot read.
  const canRead = mode === 'explicit' || !belowMinimum(turn, options);
  if (baseline && canRead) {
    const expected = Math.min(cachedBy(baseline.turn as MeasuredTurn, options), totalInput(usage));
    const missed = expected - usage.read;
    if (missed >= options.minMissTokens && usage.read < options.missRatio * expected) {
      if (turn.expectMiss !== undefined || afterCompaction) return PLAIN.expected;
      return { state: 'miss', break: describe(baseline, turn, expected, options) };
    }
  }
  if (usage.read > 0) return PLAIN.hit;
  // Nothing read or written: explicit caching without a write, or a prompt an automatic cache does not keep.
  if (usage.write === 0 && (mode === 'explicit' || !canRead)) return PLAIN.uncached;
  return PLAIN.cold;
}

/** Both snapshots say enough (model, system, tools, nothing cut) that "nothing changed" is a claim. */
function fullyDescribed(a: Turn, b: Turn): boolean {
  const described = (p: Turn['prefix']) => p?.systemHash !== undefined && p.tools !== undefined && p.partial === undefined;
  return described(a.prefix) && described(b.prefix);
}

function describe(seen: Seen, turn: MeasuredTurn, expected: number, options: DetectionOptions): BreakRecord {
  const baseline = seen.turn as MeasuredTurn;
  const missed = expected - turn.usage.read;
  const baselineMode = modeOf(baseline);
  const found = attribute(baseline, turn, baselineMode === 'explicit', breakpointsOf(baseline.model).lookbackBlocks);
  // Since the entry was last refreshed, when the baseline started processing (SPEC §4.5); a turn known only
  // from its usage is placed at its response end, past any time to first token.
  const refreshed = baseline.ts + (baseline.prefix === undefined ? 0 : Math.min(baseline.ttftMs ?? 0, MAX_FLIGHT_MS));
  const gapMs = Math.max(0, turn.ts - refreshed);
  const retention = retentionOf(baselineMode, seen.tiers, baseline);
  const gap = causeOfGap(gapMs, retention);

  let reasons: BreakReason[] = found.reasons;
  // Past the whole retention the entry is gone whatever the markers said: a re-timed marker or an unreachable entry is not the cause.
  if (gap.cause === 'ttl_expired' && !gap.partialExpiry) reasons = reasons.filter((reason) => !MARKER_REASONS.has(reason));
  let cause: BreakCause | null = null;
  if (reasons.length === 0) {
    if (fullyDescribed(baseline, turn)) {
      reasons = ['likely_provider_ttl_or_eviction'];
      cause = gap.cause;
    } else {
      reasons = ['unknown'];
      // The gap alone never claims eviction: that would say nothing changed.
      cause = gap.cause === 'likely_server_eviction' ? null : gap.cause;
    }
  }

  const price = turn.model === undefined ? undefined : options.prices(turn.model, turn.provider);
  return {
    requestId: turn.requestId,
    previousRequestId: baseline.requestId,
    sessionId: turn.sessionId,
    agentId: turn.agentId,
    ts: turn.ts,
    provider: turn.provider ?? null,
    model: turn.model ?? null,
    reason: reasons[0]!,
    reasons,
    cause,
    changedToolNames: found.changedToolNames,
    toolChanges: found.toolChanges,
    changedSystemBlocks: found.changedSystemBlocks,
    firstChangedMessageIndex: found.firstChangedMessageIndex,
    previousCacheReadTokens: baseline.usage.read,
    currentCacheReadTokens: turn.usage.read,
    cacheWriteTokens: turn.usage.write,
    expectedCacheReadTokens: expected,
    missedCacheReadTokens: missed,
    gapMs,
    ttlMs: retention.ttlMs,
    ttlMaxMs: retention.ttlMaxMs,
    ttlSource: retention.ttlSource,
    partialExpiry: cause === 'ttl_expired' && gap.partialExpiry,
    changedParams: found.changedParams,
    changesAfterCachedPrefix: found.after,
    providerDiagnosis: turn.diagnostics ?? null,
    estimatedExtraCostUsd: price ? extraCostUsd(price, missed, pricingMode(turn.usage, turn.provider, turn.model), turn.usage) : null,
    agentVersion: turn.agentVersion ?? null,
    traceId: turn.traceId ?? null,
    spanId: turn.spanId ?? null,
  };
}
