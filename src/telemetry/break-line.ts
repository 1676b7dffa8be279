// SPEC §6: every break as one logfmt line, on the server's log and on
// `cachebreak tail --print`.
import type { BreakRecord } from '../core/types.js';
import type { ExternalBreak } from '../store/store.js';
import type { LogValue } from './logfmt.js';

export function breakFields(record: BreakRecord): Record<string, LogValue> {
  return {
    reason: record.reason,
    cause: record.cause ?? undefined,
    session: record.sessionId,
    agent: record.agentId,
    request: record.requestId,
    previousRequest: record.previousRequestId,
    model: record.model ?? undefined,
    previousCacheReadTokens: record.previousCacheReadTokens,
    currentCacheReadTokens: record.currentCacheReadTokens,
    missedCacheReadTokens: record.missedCacheReadTokens,
    changedToolNames: record.changedToolNames.length > 0 ? record.changedToolNames : undefined,
    changedSystemBlocks: record.changedSystemBlocks?.map(String),
    firstChangedMessageIndex: record.firstChangedMessageIndex ?? undefined,
    changedParams: record.changedParams.length > 0 ? record.changedParams : undefined,
    changesAfterCachedPrefix: record.changesAfterCachedPrefix.length > 0 ? record.changesAfterCachedPrefix : undefined,
    gapMs: record.gapMs,
    estimatedExtraCostUsd: record.estimatedExtraCostUsd ?? undefined,
  };
}

/** A break a harness reported itself (e.g. Claude Code's debug log), its reason text verbatim. */
export function externalBreakFields(record: ExternalBreak): Record<string, LogValue> {
  return {
    harness: record.harness,
    reason: record.reason,
    session: record.sessionId,
    agent: record.agentId,
    source: record.source,
    call: record.callNumber ?? undefined,
    previousCacheReadTokens: record.previousCacheReadTokens ?? undefined,
    currentCacheReadTokens: record.currentCacheReadTokens ?? undefined,
    cacheCreationTokens: record.cacheCreationTokens ?? undefined,
  };
}
