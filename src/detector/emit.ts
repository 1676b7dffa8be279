// `prompt_cache_break`, the way a harness reports it: a logfmt line (the
// server's own format), an OTel log record through @opentelemetry/api-logs
// when the harness has it, or a callback of its own.
import type { BreakRecord } from '../core/types.js';
import { breakAttributes, breakBody, BREAK_EVENT_NAME, type BreakAttributes } from '../telemetry/break-record.js';
import { breakFields } from '../telemetry/break-line.js';
import { logfmt } from '../telemetry/logfmt.js';

export { BREAK_EVENT_NAME };

export type BreakEmitter = (record: BreakRecord) => void;

/** The break as the server logs it: `ts=… level=warn event=prompt_cache_break reason=… …`. */
export function breakLine(record: BreakRecord, now: Date = new Date()): string {
  return logfmt({ ts: now.toISOString(), level: 'warn', event: BREAK_EVENT_NAME, ...breakFields(record) });
}

/** Writes each break as one logfmt line (default: console.warn). */
export function logfmtEmitter(write: (line: string) => void = (line) => console.warn(line)): BreakEmitter {
  return (record) => write(breakLine(record));
}

/** The part of an OTel logger this uses; a logger of `@opentelemetry/api-logs` fits. */
export interface OtelLogger {
  emit(record: { eventName?: string; timestamp?: number; severityNumber?: number; severityText?: string; body?: string; attributes?: BreakAttributes }): void;
}

/** SeverityNumber.WARN of the OTel logs data model. */
const WARN = 13;

/** Emits each break as an OTel log record (event name prompt_cache_break, SPEC §6 fields as attributes). */
export function otelEmitter(logger: OtelLogger, project = 'default'): BreakEmitter {
  return (record) =>
    logger.emit({
      eventName: BREAK_EVENT_NAME,
      timestamp: record.ts,
      severityNumber: WARN,
      severityText: 'WARN',
      body: breakBody(record),
      attributes: breakAttributes(project, record),
    });
}

/**
 * Where breaks go: an OTel log record through the global logger provider of
 * `@opentelemetry/api-logs` when the harness has it installed, else a logfmt
 * line on stderr (console.warn). Resolves once it knows which.
 */
export async function defaultEmitter(project = 'default'): Promise<BreakEmitter> {
  try {
    const api = await import('@opentelemetry/api-logs');
    return otelEmitter(api.logs.getLogger('cachebreak'), project);
  } catch {
    return logfmtEmitter();
  }
}
