// SPEC §4: the state of a turn, the break criterion and the attribution of a
// break, judged from the turn and the previous turn of its stream.
import { changedToolNames, diffBlocks, diffTools, firstRewrittenIndex, NO_TOOL_CHANGES } from './diff.js';
import type { DetectionOptions } from './options.js';
import { extraCostUsd, findPrice } from './prices.js';
import type {
  BreakCause,
  BreakReason,
  BreakRecord,
  Evaluation,
  Prefix,
  ToolChanges,
  TtlSource,
  Turn,
  TurnState,
  Usage,
} from './types.js';

/** The provider default TTL when neither the request nor the previous write says otherwise. */
export const DEFAULT_TTL_MS = 5 * 60_000;
const ONE_HOUR_MS = 60 * 60_000;

/** A turn that has usage: the only kind that gets a state. */
export type MeasuredTurn = Turn & { usage: Usage };

export function totalInput(usage: Usage): number {
  return usage.uncached + usage.read + usage.write;
}

/** SPEC §4.3: what `current` could have read from what `previous` left in the cache. */
export function expectedRead(previous: Usage, current: Usage): number {
  return Math.min(previous.read + previous.write, totalInput(current));
}

export function isMiss(previous: Usage, current: Usage, options: DetectionOptions): boolean {
  const expected = expectedRead(previous, current);
  const missed = expected - current.read;
  return missed >= options.minMissTokens && current.read < options.missRatio * expected;
}

interface Attribution {
  reasons: BreakReason[];
  toolChanges: ToolChanges;
  changedSystemBlocks: number[] | null;
  firstChangedMessageIndex: number | null;
}

/** SPEC §4.4 steps 1–6: every change found between two prefixes, in prefix order. */
export function attribute(previous: Prefix | undefined, current: Prefix | undefined): Attribution {
  const found: Attribution = {
    reasons: [],
    toolChanges: NO_TOOL_CHANGES,
    changedSystemBlocks: null,
    firstChangedMessageIndex: null,
  };
  if (!previous || !current) return found;
  if (previous.model !== current.model) found.reasons.push('model_changed');

  if (previous.tools && current.tools && previous.toolsHash !== current.toolsHash) {
    const changes = diffTools(previous.tools, current.tools);
    if (changes.added.length + changes.removed.length + changes.schemaChanged.length > 0) {
      found.reasons.push('tools_schema_changed');
    }
    if (changes.moved.length > 0) found.reasons.push('tools_order_changed');
    found.toolChanges = changes;
  }

  if (previous.systemHash !== undefined && current.systemHash !== undefined) {
    if (previous.systemHash !== current.systemHash) {
      found.reasons.push('system_changed');
      if (previous.systemBlockHashes && current.systemBlockHashes) {
        found.changedSystemBlocks = diffBlocks(previous.systemBlockHashes, current.systemBlockHashes);
      }
    }
  }

  if (
    previous.cacheControlHash !== undefined &&
    current.cacheControlHash !== undefined &&
    previous.cacheControlHash !== current.cacheControlHash
  ) {
    found.reasons.push('cache_control_changed');
  }

  if (previous.messageHashes && current.messageHashes) {
    const index = firstRewrittenIndex(previous.messageHashes, current.messageHashes);
    if (index !== null) {
      found.reasons.push('messages_rewritten');
      found.firstChangedMessageIndex = index;
    }
  }
  return found;
}

/** Both prefixes say enough (model, system, tools) that "nothing changed" is a claim. */
function fullyDescribed(previous: Prefix | undefined, current: Prefix | undefined): boolean {
  return (
    previous?.systemHash !== undefined &&
    current?.systemHash !== undefined &&
    previous.tools !== undefined &&
    current.tools !== undefined
  );
}

function ttlOf(previous: MeasuredTurn, current: MeasuredTurn): { ttlMs: number; ttlSource: TtlSource } {
  if (current.prefix?.ttlMs !== undefined) return { ttlMs: current.prefix.ttlMs, ttlSource: 'declared' };
  if (previous.usage.write1h > 0) return { ttlMs: ONE_HOUR_MS, ttlSource: 'previous_1h_write' };
  return { ttlMs: DEFAULT_TTL_MS, ttlSource: 'provider_default' };
}

function describeBreak(previous: MeasuredTurn, current: MeasuredTurn, options: DetectionOptions): BreakRecord {
  const expected = expectedRead(previous.usage, current.usage);
  const missed = expected - current.usage.read;
  const found = attribute(previous.prefix, current.prefix);
  // Without both snapshots the turns still know their models (from usage): compare what both carry.
  if ((!previous.prefix || !current.prefix) && previous.model && current.model && previous.model !== current.model) {
    found.reasons.unshift('model_changed');
  }
  const gapMs = Math.max(0, current.ts - (previous.endTs ?? previous.ts));
  const { ttlMs, ttlSource } = ttlOf(previous, current);
  const expired = gapMs > ttlMs;

  let reasons = found.reasons;
  let cause: BreakCause | null = null;
  if (reasons.length === 0) {
    if (fullyDescribed(previous.prefix, current.prefix)) {
      reasons = ['likely_provider_ttl_or_eviction'];
      cause = expired ? 'ttl_expired' : 'likely_server_eviction';
    } else {
      reasons = ['unknown'];
      cause = expired ? 'ttl_expired' : null;
    }
  }

  const price = findPrice(options.prices, current.model);
  return {
    requestId: current.requestId,
    previousRequestId: previous.requestId,
    sessionId: current.sessionId,
    agentId: current.agentId,
    ts: current.ts,
    provider: current.provider ?? null,
    model: current.model ?? null,
    reason: reasons[0]!,
    reasons,
    cause,
    changedToolNames: changedToolNames(found.toolChanges),
    toolChanges: found.toolChanges,
    changedSystemBlocks: found.changedSystemBlocks,
    firstChangedMessageIndex: found.firstChangedMessageIndex,
    previousCacheReadTokens: previous.usage.read,
    currentCacheReadTokens: current.usage.read,
    cacheWriteTokens: current.usage.write,
    expectedCacheReadTokens: expected,
    missedCacheReadTokens: missed,
    gapMs,
    ttlMs,
    ttlSource,
    providerDiagnosis: current.diagnostics ?? null,
    estimatedExtraCostUsd: price ? extraCostUsd(price, missed, current.usage) : null,
  };
}

/** SPEC §4.1: the state of `current`, given the previous turn of its stream with usage. */
export function evaluateTurn(
  previous: MeasuredTurn | undefined,
  current: MeasuredTurn,
  options: DetectionOptions,
): Evaluation {
  const previousRequestId = previous?.requestId ?? null;
  const result = (state: TurnState, record: BreakRecord | null = null): Evaluation => ({
    requestId: current.requestId,
    state,
    previousRequestId,
    break: record,
  });
  const usage = current.usage;
  if (!usage.cacheReported) return result('unreported');
  if (!previous) return result('cold');
  if (isMiss(previous.usage, usage, options)) {
    return current.expectMiss ? result('expected') : result('miss', describeBreak(previous, current, options));
  }
  if (usage.read > 0) return result('hit');
  if (usage.write === 0) return result('uncached');
  return result('cold');
}
