// Every new break as an OTel log record (event name `prompt_cache_break`) to
// an OTLP endpoint, so that breaks show up beside the rest of a team's
// telemetry. The SPEC §6 fields are the attributes: scalars as they are,
// lists as arrays, toolChanges flattened (toolChanges.added, …), the
// provider's own diagnosis as a JSON string (its shape is the provider's);
// null fields are left out. The logger provider is this server's own, not
// the process-wide one, so that two servers in one process stay apart.
import { Metadata } from '@grpc/grpc-js';
import { SeverityNumber, type LogAttributes } from '@opentelemetry/api-logs';
import { OTLPLogExporter as GrpcLogExporter } from '@opentelemetry/exporter-logs-otlp-grpc';
import { OTLPLogExporter as JsonLogExporter } from '@opentelemetry/exporter-logs-otlp-http';
import { OTLPLogExporter as ProtoLogExporter } from '@opentelemetry/exporter-logs-otlp-proto';
import { logs, resources } from '@opentelemetry/sdk-node';
import type { OtlpTarget } from '../config.js';
import type { BreakRecord } from '../core/types.js';
import type { ProjectBreak } from '../store/store.js';

export const BREAK_EVENT_NAME = 'prompt_cache_break';

export function breakAttributes(project: string, record: BreakRecord): LogAttributes {
  const attributes: LogAttributes = {
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
  return attributes;
}

function exporterFor(target: OtlpTarget): logs.LogRecordExporter {
  switch (target.protocol) {
    case 'grpc': {
      const metadata = new Metadata();
      for (const [key, value] of Object.entries(target.headers)) metadata.set(key, value);
      return new GrpcLogExporter({ url: target.url, metadata });
    }
    case 'http/json':
      return new JsonLogExporter({ url: target.url, headers: target.headers });
    default:
      return new ProtoLogExporter({ url: target.url, headers: target.headers });
  }
}

export interface BreakExport {
  /** A subscriber for Pipeline.subscribe. */
  emit(entry: ProjectBreak): void;
  /** Sends what is queued, then stops. */
  shutdown(): Promise<void>;
}

export function startBreakExport(target: OtlpTarget, serviceName: string): BreakExport {
  const provider = new logs.LoggerProvider({
    resource: resources.resourceFromAttributes({ 'service.name': serviceName }),
    processors: [new logs.BatchLogRecordProcessor({ exporter: exporterFor(target) })],
  });
  const logger = provider.getLogger('cachebreak');
  return {
    emit({ project, record }) {
      logger.emit({
        eventName: BREAK_EVENT_NAME,
        timestamp: record.ts,
        severityNumber: SeverityNumber.WARN,
        severityText: 'WARN',
        body: `prompt cache break in session ${record.sessionId}: ${record.reason}, ${record.missedCacheReadTokens} cache-read tokens missed`,
        attributes: breakAttributes(project, record),
      });
    },
    shutdown: () => provider.shutdown(),
  };
}
