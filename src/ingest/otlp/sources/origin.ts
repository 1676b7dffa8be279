// Where an OTLP record's turn came from (core TurnOrigin): the agent's version
// from the resource's `service.version`, and the record's trace and span ids.
// Every event a log record or span maps to directly carries them; fields the
// event already names (a native record's own) are kept.
import type { CacheEvent, TurnOrigin } from '../../../core/types.js';
import type { LogRecord, Span } from '../records.js';

/**
 * Harnesses whose `service.version` is the Node.js version, not their own:
 * Gemini CLI (seen in 0.61.0) and Qwen Code, which keeps Gemini CLI's
 * telemetry set-up.
 */
const NODE_VERSION_SERVICES = new Set(['gemini-cli', 'qwen-code']);

const TRACE_ID = /^[0-9a-f]{32}$/;
const SPAN_ID = /^[0-9a-f]{16}$/;
const ZEROS = /^0+$/;

function recordOrigin(record: LogRecord | Span): TurnOrigin {
  const origin: TurnOrigin = {};
  const version = record.resource['service.version'];
  const service = record.resource['service.name'];
  if (typeof version === 'string' && version.length > 0 && version.length <= 128 && !(typeof service === 'string' && NODE_VERSION_SERVICES.has(service))) {
    origin.agentVersion = version;
  }
  // All zeros is W3C trace context's "no id".
  const traceId = record.traceId.toLowerCase();
  if (TRACE_ID.test(traceId) && !ZEROS.test(traceId)) origin.traceId = traceId;
  const spanId = record.spanId.toLowerCase();
  if (SPAN_ID.test(spanId) && !ZEROS.test(spanId)) origin.spanId = spanId;
  return origin;
}

/** The events with the record's origin in the fields they leave unnamed. */
export function withOrigin(events: readonly CacheEvent[], record: LogRecord | Span): CacheEvent[] {
  const origin = recordOrigin(record);
  if (Object.keys(origin).length === 0) return [...events];
  return events.map((event) => ({ ...origin, ...event }));
}
