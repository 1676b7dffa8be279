// Every new break as an OTel log record (event name `prompt_cache_break`,
// attributes from break-record.ts) to an OTLP endpoint, so that breaks show
// up beside the rest of a team's telemetry; a break that late events judged
// again is sent again, its new record marked `cachebreak.revision = true`. The logger provider is this
// server's own, not the process-wide one, so that two servers in one process
// stay apart.
import { Metadata } from '@grpc/grpc-js';
import { SeverityNumber } from '@opentelemetry/api-logs';
import { OTLPLogExporter as GrpcLogExporter } from '@opentelemetry/exporter-logs-otlp-grpc';
import { OTLPLogExporter as JsonLogExporter } from '@opentelemetry/exporter-logs-otlp-http';
import { OTLPLogExporter as ProtoLogExporter } from '@opentelemetry/exporter-logs-otlp-proto';
import { logs, resources } from '@opentelemetry/sdk-node';
import type { OtlpTarget } from '../config.js';
import type { ProjectBreak } from '../store/store.js';
import { breakAttributes, breakBody, BREAK_EVENT_NAME } from './break-record.js';

/** Set (true) on the record of a break sent again after late events judged it again. */
export const REVISION_ATTRIBUTE = 'cachebreak.revision';

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
  /** A subscriber for Pipeline.subscribeRevisions. */
  emitRevision(entry: ProjectBreak): void;
  /** Sends what is queued, then stops. */
  shutdown(): Promise<void>;
}

export function startBreakExport(target: OtlpTarget, serviceName: string): BreakExport {
  const provider = new logs.LoggerProvider({
    resource: resources.resourceFromAttributes({ 'service.name': serviceName }),
    processors: [new logs.BatchLogRecordProcessor({ exporter: exporterFor(target) })],
  });
  const logger = provider.getLogger('cachebreak');
  const emit = ({ project, record }: ProjectBreak, revision: boolean) =>
    logger.emit({
      eventName: BREAK_EVENT_NAME,
      timestamp: record.ts,
      severityNumber: SeverityNumber.WARN,
      severityText: 'WARN',
      body: breakBody(record),
      attributes: { ...breakAttributes(project, record), ...(revision ? { [REVISION_ATTRIBUTE]: true } : {}) },
    });
  return {
    emit: (entry) => emit(entry, false),
    emitRevision: (entry) => emit(entry, true),
    shutdown: () => provider.shutdown(),
  };
}
