// One object of a telemetry outfile → Telemetry, the shape the OTLP decoders
// produce. The file holds the OpenTelemetry JS SDK's own objects as
// JSON.stringify saw them, not OTLP: a span (SpanImpl: `_spanContext`,
// `attributes`, hrTime `[seconds, nanoseconds]` arrays), a log record
// (LogRecordImpl: `hrTime` or `_hrTime`, `_body`…), or a metric batch
// (ResourceMetrics: `scopeMetrics[].metrics[].dataPoints`). The harnesses
// serialise with a replacer that writes every object seen twice in one dump
// as "[Circular]": metric points share their collection time, so only the
// first point of a batch carries it.
import type { Attributes, AttributeValue, LogRecord, MetricPoint, Origin, Span, Temporality, Telemetry } from '../../otlp/records.js';

export class DumpError extends Error {}

type Json = Record<string, unknown>;

const CIRCULAR = '[Circular]';
const MAX_DEPTH = 32;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** hrTime [seconds, nanoseconds] → epoch ms; undefined when absent or written as "[Circular]". */
function hrMs(value: unknown): number | undefined {
  if (!Array.isArray(value) || value.length !== 2) return undefined;
  const [seconds, nanos] = value as unknown[];
  if (typeof seconds !== 'number' || typeof nanos !== 'number') return undefined;
  return seconds * 1000 + Math.floor(nanos / 1e6);
}

function plain(value: unknown, depth: number): AttributeValue {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (depth > MAX_DEPTH) throw new DumpError(`values nested deeper than ${MAX_DEPTH} levels`);
  if (Array.isArray(value)) return value.map((item) => plain(item, depth + 1));
  if (isObject(value)) return attributes(value, depth + 1);
  return null;
}

function attributes(value: unknown, depth = 0): { [key: string]: AttributeValue } {
  const out: { [key: string]: AttributeValue } = {};
  if (!isObject(value)) return out;
  for (const key of Object.keys(value)) {
    // A "__proto__" key would replace the object's prototype instead of adding a field.
    if (key !== '__proto__') out[key] = plain(value[key], depth);
  }
  return out;
}

/**
 * Resource attributes, whichever SDK version wrote them: `attributes` (a
 * plain copy), `_attributes` / `_syncAttributes` (1.x), `_memoizedAttributes`
 * or `_rawAttributes` as [key, value] pairs (2.x).
 */
function resourceAttributes(resource: unknown): Attributes {
  if (!isObject(resource)) return {};
  for (const key of ['attributes', '_memoizedAttributes', '_attributes', '_syncAttributes']) {
    if (isObject(resource[key])) return attributes(resource[key]);
  }
  const raw = resource._rawAttributes;
  if (!Array.isArray(raw)) return {};
  const out: { [key: string]: AttributeValue } = {};
  for (const pair of raw) {
    if (!Array.isArray(pair) || typeof pair[0] !== 'string' || pair[0] === '__proto__') continue;
    // A value still pending (a Promise) was written as {}: not an attribute value.
    const value: unknown = pair[1];
    if (!isObject(value)) out[pair[0]] = plain(value, 0);
  }
  return out;
}

function text(value: unknown): string {
  return typeof value === 'string' && value !== CIRCULAR ? value : '';
}

function scopeOf(value: unknown): Origin['scope'] {
  return isObject(value) ? { name: text(value.name), version: text(value.version) } : { name: '', version: '' };
}

function originOf(o: Json, resource: Attributes): Origin {
  return { resource, scope: scopeOf(o.instrumentationScope ?? o.instrumentationLibrary ?? o.scope) };
}

function ids(value: unknown): { traceId: string; spanId: string } {
  if (!isObject(value)) return { traceId: '', spanId: '' };
  return { traceId: text(value.traceId).toLowerCase(), spanId: text(value.spanId).toLowerCase() };
}

function span(o: Json): Span {
  const startMs = hrMs(o.startTime);
  if (startMs === undefined) throw new DumpError('span without a startTime');
  const duration = hrMs(o._duration ?? o.duration);
  const events = (Array.isArray(o.events) ? o.events : []).filter(isObject).map((e) => ({
    name: text(e.name),
    timeMs: hrMs(e.time) ?? startMs,
    attributes: attributes(e.attributes),
  }));
  return {
    ...originOf(o, resourceAttributes(o.resource)),
    name: text(o.name),
    ...ids(o._spanContext ?? o.spanContext),
    startMs,
    endMs: hrMs(o.endTime) ?? startMs + (duration ?? 0),
    attributes: attributes(o.attributes),
    events,
  };
}

/** LogRecordImpl: public fields in early versions, accessors over `_` fields later (JSON keeps only the fields). */
function logRecord(o: Json): LogRecord {
  const field = (name: string): unknown => o[name] ?? o[`_${name}`];
  const timeMs = hrMs(field('hrTime')) ?? hrMs(field('hrTimeObserved'));
  if (timeMs === undefined) throw new DumpError('log record without an hrTime');
  const severity = field('severityNumber');
  const body = field('body');
  return {
    ...originOf(o, resourceAttributes(o.resource)),
    timeMs,
    eventName: text(field('eventName')),
    severityNumber: typeof severity === 'number' ? severity | 0 : 0,
    body: body === undefined ? null : plain(body, 0),
    attributes: attributes(o.attributes),
    ...ids(field('spanContext')),
  };
}

/** The SDK's DataPointType and AggregationTemporality enums (not OTLP's numbering). */
const KIND: Record<number, MetricPoint['kind']> = { 0: 'histogram', 1: 'histogram', 2: 'gauge', 3: 'sum' };
const TEMPORALITY: Record<number, Temporality> = { 0: 'delta', 1: 'cumulative' };

function pointValue(kind: MetricPoint['kind'], value: unknown): number | undefined {
  if (kind !== 'histogram') return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
  return isObject(value) && typeof value.sum === 'number' ? value.sum : undefined;
}

function metricBatch(o: Json): { points: MetricPoint[]; ignored: number } {
  const resource = resourceAttributes(o.resource);
  const points: MetricPoint[] = [];
  let ignored = 0;
  // Shared time arrays are written once per dump: later points read "[Circular]" for them.
  let lastStart: number | undefined;
  let lastEnd: number | undefined;
  for (const scopeMetrics of Array.isArray(o.scopeMetrics) ? o.scopeMetrics : []) {
    if (!isObject(scopeMetrics)) continue;
    const origin: Origin = { resource, scope: scopeOf(scopeMetrics.scope) };
    for (const metric of Array.isArray(scopeMetrics.metrics) ? scopeMetrics.metrics : []) {
      if (!isObject(metric)) continue;
      const kind = typeof metric.dataPointType === 'number' ? KIND[metric.dataPointType] : undefined;
      const name = isObject(metric.descriptor) ? text(metric.descriptor.name) : '';
      const dataPoints = (Array.isArray(metric.dataPoints) ? metric.dataPoints : []).filter(isObject);
      if (kind === undefined || name === '') {
        ignored += dataPoints.length;
        continue;
      }
      const temporality = kind === 'gauge' ? 'unspecified' : (TEMPORALITY[Number(metric.aggregationTemporality)] ?? 'unspecified');
      for (const p of dataPoints) {
        lastStart = hrMs(p.startTime) ?? lastStart;
        lastEnd = hrMs(p.endTime) ?? lastEnd;
        const value = pointValue(kind, p.value);
        if (value === undefined || lastEnd === undefined) {
          ignored++;
          continue;
        }
        points.push({
          ...origin,
          metric: name,
          kind,
          temporality,
          monotonic: kind === 'sum' && metric.isMonotonic === true,
          startMs: lastStart ?? lastEnd,
          timeMs: lastEnd,
          value,
          attributes: attributes(p.attributes),
        });
      }
    }
  }
  return { points, ignored };
}

/** One dumped object as Telemetry, plus the metric points that carried no usable value. */
export function telemetryOfDump(value: unknown): { telemetry: Telemetry; ignored: number } {
  if (!isObject(value)) throw new DumpError('expected a JSON object');
  const telemetry: Telemetry = { logs: [], spans: [], points: [] };
  if (Array.isArray(value.scopeMetrics)) {
    const { points, ignored } = metricBatch(value);
    telemetry.points = points;
    return { telemetry, ignored };
  }
  // Log records carry a span context too (the span active when logged): a span is what has a start time.
  if (value.startTime !== undefined && (value._spanContext !== undefined || value.spanContext !== undefined)) {
    telemetry.spans.push(span(value));
  } else if (value.hrTime !== undefined || value._hrTime !== undefined) {
    telemetry.logs.push(logRecord(value));
  } else {
    throw new DumpError('not a span, log record or metric batch as the OpenTelemetry SDK writes them');
  }
  return { telemetry, ignored: 0 };
}
