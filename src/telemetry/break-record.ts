// A break record (SPEC §6) as an OTel log record's parts: event name, body
// and attributes. The SPEC §6 fields are the attributes: scalars as they
// are, lists as arrays, toolChanges flattened (toolChanges.added, …), the
// provider's own diagnosis as a JSON string (its shape is the provider's);
// null fields are left out; `fingerprint` names the break's cause
// (core/fingerprint.ts), so a backend can group by it. Pure: the server's OTLP export and the detector
// library's emitter both use it.
import { breakFingerprint } from '../core/fingerprint.js';
import type { BreakRecord } from '../core/types.js';

/** OTel log attributes: a subset of LogAttributes (`@opentelemetry/api-logs`), without depending on it. */
export type BreakAttributes = Record<string, string | number | boolean | string[] | number[]>;

export const BREAK_EVENT_NAME = 'prompt_cache_break';

export function breakAttributes(project: string, record: BreakRecord): BreakAttributes {
  const attributes: BreakAttributes = {
    project,
    requestId: record.requestId,
    previousRequestId: record.previousRequestId,
    sessionId: record.sessionId,
    agentId: record.agentId,
    ts: new Date(record.ts).toISOString(),
    reason: record.reason,
    reasons: record.reasons,
    changedToolNames: record.changedToolNames,
    'toolChanges.added': record.toolChanges.added,
    'toolChanges.removed': record.toolChanges.removed,
    'toolChanges.schemaChanged': record.toolChanges.schemaChanged,
    'toolChanges.moved': record.toolChanges.moved,
    previousCacheReadTokens: record.previousCacheReadTokens,
    currentCacheReadTokens: record.currentCacheReadTokens,
    cacheWriteTokens: record.cacheWriteTokens,
    expectedCacheReadTokens: record.expectedCacheReadTokens,
    missedCacheReadTokens: record.missedCacheReadTokens,
    gapMs: record.gapMs,
    ttlSource: record.ttlSource,
    partialExpiry: record.partialExpiry,
    changedParams: record.changedParams,
    changesAfterCachedPrefix: record.changesAfterCachedPrefix,
    fingerprint: breakFingerprint(record),
  };
  if (record.provider !== null) attributes.provider = record.provider;
  if (record.model !== null) attributes.model = record.model;
  if (record.cause !== null) attributes.cause = record.cause;
  if (record.ttlMs !== null) attributes.ttlMs = record.ttlMs;
  if (record.ttlMaxMs !== null) attributes.ttlMaxMs = record.ttlMaxMs;
  if (record.changedSystemBlocks !== null) attributes.changedSystemBlocks = record.changedSystemBlocks;
  if (record.firstChangedMessageIndex !== null) attributes.firstChangedMessageIndex = record.firstChangedMessageIndex;
  if (record.providerDiagnosis !== null && record.providerDiagnosis !== undefined) {
    attributes.providerDiagnosis = JSON.stringify(record.providerDiagnosis);
  }
  if (record.estimatedExtraCostUsd !== null) attributes.estimatedExtraCostUsd = record.estimatedExtraCostUsd;
  // A record stored before these were kept has none.
  for (const key of ['agentVersion', 'traceId', 'spanId'] as const) {
    const value = record[key];
    if (value !== null && value !== undefined) attributes[key] = value;
  }
  return attributes;
}

export function breakBody(record: BreakRecord): string {
  return `prompt cache break in session ${record.sessionId}: ${record.reason}, ${record.missedCacheReadTokens} cache-read tokens missed`;
}
