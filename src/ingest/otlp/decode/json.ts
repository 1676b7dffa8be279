// OTLP/JSON requests to Telemetry, by the spec's JSON Protobuf Encoding:
// lowerCamelCase keys, trace and span ids as hex (not base64), 64-bit
// integers as decimal strings or numbers, enums as integers. Unknown keys are
// ignored. The result equals the protobuf decoder's for the same request.
import type { Attributes, AttributeValue, LogRecord, MetricPoint, Origin, Span, SpanEvent, Temporality } from '../records.js';
import { emptyDecoded, ignore, MAX_DEPTH, type Decoded, type Signal } from './decoded.js';
import { DecodeError } from './wire.js';
import { jsonProblem } from '../../json-problem.js';

type Json = Record<string, unknown>;

function object(value: unknown, field: string): Json {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) throw new DecodeError(`${field}: expected an object`);
  return value as Json;
}

function list(value: unknown, field: string): unknown[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new DecodeError(`${field}: expected an array`);
  return value;
}

function text(value: unknown, field: string): string {
  if (value === undefined || value === null) return '';
  if (typeof value !== 'string') throw new DecodeError(`${field}: expected a string`);
  return value;
}

const DIGITS = /^-?\d+$/;

/** int64: a number when exact as one, else the decimal string, as the protobuf decoder gives it. */
function int64(value: unknown, field: string): number | string {
  if (typeof value === 'number' && Number.isInteger(value)) return Number.isSafeInteger(value) ? value : BigInt(value).toString();
  if (typeof value === 'string' && DIGITS.test(value)) {
    const n = Number(value);
    return Number.isSafeInteger(n) ? n : BigInt.asIntN(64, BigInt(value)).toString();
  }
  throw new DecodeError(`${field}: expected a 64-bit integer, as a number or a decimal string`);
}

/** A fixed64 of nanoseconds since the epoch, as whole milliseconds. */
function nanosToMs(value: unknown, field: string): number {
  if (value === undefined || value === null) return 0;
  if (typeof value === 'string' && /^\d+$/.test(value)) return value.length > 6 ? Number(value.slice(0, -6)) : 0;
  if (typeof value === 'number' && value >= 0) return Math.floor(value / 1e6);
  throw new DecodeError(`${field}: expected nanoseconds since the epoch, as a decimal string or a number`);
}

/** A double: a number, or "NaN", "Infinity", "-Infinity" as proto3 JSON writes those. */
function double(value: unknown, field: string): number {
  if (typeof value === 'number') return value;
  if (value === 'NaN' || value === 'Infinity' || value === '-Infinity') return Number(value);
  if (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value))) return Number(value);
  throw new DecodeError(`${field}: expected a number`);
}

function hex(value: unknown, field: string): string {
  return text(value, field).toLowerCase();
}

function anyValue(value: unknown, depth: number): AttributeValue {
  if (depth > MAX_DEPTH) throw new DecodeError(`values nested deeper than ${MAX_DEPTH} levels`);
  const v = object(value, 'value');
  if (v.stringValue !== undefined) return text(v.stringValue, 'stringValue');
  if (v.boolValue !== undefined) {
    if (typeof v.boolValue !== 'boolean') throw new DecodeError('boolValue: expected true or false');
    return v.boolValue;
  }
  if (v.intValue !== undefined) return int64(v.intValue, 'intValue');
  if (v.doubleValue !== undefined) return double(v.doubleValue, 'doubleValue');
  if (v.arrayValue !== undefined) return list(object(v.arrayValue, 'arrayValue').values, 'arrayValue.values').map((item) => anyValue(item, depth + 1));
  if (v.kvlistValue !== undefined) {
    const out: Record<string, AttributeValue> = {};
    for (const kv of list(object(v.kvlistValue, 'kvlistValue').values, 'kvlistValue.values')) keyValue(kv, out, depth + 1);
    return out;
  }
  if (v.bytesValue !== undefined) return Buffer.from(text(v.bytesValue, 'bytesValue'), 'base64').toString('base64');
  return null;
}

function keyValue(kv: unknown, into: Record<string, AttributeValue>, depth: number): void {
  const entry = object(kv, 'attributes[]');
  const key = text(entry.key, 'key');
  // A "__proto__" key would replace the object's prototype instead of adding a field.
  if (key !== '__proto__') into[key] = entry.value === undefined || entry.value === null ? null : anyValue(entry.value, depth);
}

function attributes(value: unknown): Attributes {
  const out: Record<string, AttributeValue> = {};
  for (const kv of list(value, 'attributes')) keyValue(kv, out, 0);
  return out;
}

const KEYS = {
  logs: ['resourceLogs', 'scopeLogs', 'logRecords'],
  traces: ['resourceSpans', 'scopeSpans', 'spans'],
  metrics: ['resourceMetrics', 'scopeMetrics', 'metrics'],
} as const;

function walk(request: Json, signal: Signal, item: (origin: Origin, value: Json) => void): void {
  const [resourcesKey, scopesKey, itemsKey] = KEYS[signal];
  for (const resourceValue of list(request[resourcesKey], resourcesKey)) {
    const entry = object(resourceValue, resourcesKey);
    const resource = attributes(object(entry.resource, 'resource').attributes);
    for (const scopeValue of list(entry[scopesKey], scopesKey)) {
      const scopeEntry = object(scopeValue, scopesKey);
      const scope = object(scopeEntry.scope, 'scope');
      const origin: Origin = { resource, scope: { name: text(scope.name, 'scope.name'), version: text(scope.version, 'scope.version') } };
      for (const value of list(scopeEntry[itemsKey], itemsKey)) item(origin, object(value, itemsKey));
    }
  }
}

function logRecord(origin: Origin, r: Json): LogRecord {
  const time = nanosToMs(r.timeUnixNano, 'timeUnixNano');
  return {
    resource: origin.resource,
    scope: origin.scope,
    timeMs: time || nanosToMs(r.observedTimeUnixNano, 'observedTimeUnixNano'),
    eventName: text(r.eventName, 'eventName'),
    // Severity is never read for detection: a name sent instead of the number costs the record nothing.
    severityNumber: typeof r.severityNumber === 'number' ? r.severityNumber | 0 : 0,
    body: r.body === undefined || r.body === null ? null : anyValue(r.body, 0),
    attributes: attributes(r.attributes),
    traceId: hex(r.traceId, 'traceId'),
    spanId: hex(r.spanId, 'spanId'),
  };
}

function span(origin: Origin, s: Json): Span {
  const events: SpanEvent[] = list(s.events, 'events').map((value) => {
    const e = object(value, 'events');
    return { name: text(e.name, 'events.name'), timeMs: nanosToMs(e.timeUnixNano, 'events.timeUnixNano'), attributes: attributes(e.attributes) };
  });
  return {
    ...origin,
    name: text(s.name, 'name'),
    traceId: hex(s.traceId, 'traceId'),
    spanId: hex(s.spanId, 'spanId'),
    startMs: nanosToMs(s.startTimeUnixNano, 'startTimeUnixNano'),
    endMs: nanosToMs(s.endTimeUnixNano, 'endTimeUnixNano'),
    attributes: attributes(s.attributes),
    events,
  };
}

const TEMPORALITY: Record<string, Temporality> = {
  0: 'unspecified',
  1: 'delta',
  2: 'cumulative',
  AGGREGATION_TEMPORALITY_UNSPECIFIED: 'unspecified',
  AGGREGATION_TEMPORALITY_DELTA: 'delta',
  AGGREGATION_TEMPORALITY_CUMULATIVE: 'cumulative',
};

/** A temporality by number or name; anything else is unspecified. */
function temporalityOf(raw: unknown): Temporality {
  const key = String(raw ?? 0);
  return Object.hasOwn(TEMPORALITY, key) ? TEMPORALITY[key]! : 'unspecified';
}

function metric(origin: Origin, m: Json, out: Decoded): void {
  const name = text(m.name, 'name');
  const kind: MetricPoint['kind'] | undefined =
    m.gauge != null ? 'gauge' : m.sum != null ? 'sum' : m.histogram != null || m.exponentialHistogram != null ? 'histogram' : undefined;
  if (kind === undefined) {
    ignore(out, m.summary != null ? 'summary_metric' : 'metric_without_data');
    return;
  }
  const data = object(kind === 'histogram' ? (m.histogram ?? m.exponentialHistogram) : m[kind], kind);
  const temporality = kind === 'gauge' ? 'unspecified' : temporalityOf(data.aggregationTemporality);
  const monotonic = kind === 'sum' && data.isMonotonic === true;
  for (const value of list(data.dataPoints, 'dataPoints')) {
    const p = object(value, 'dataPoints');
    let v: number | undefined;
    if (kind === 'histogram') v = p.sum === undefined || p.sum === null ? undefined : double(p.sum, 'sum');
    else if (p.asDouble !== undefined && p.asDouble !== null) v = double(p.asDouble, 'asDouble');
    else if (p.asInt !== undefined && p.asInt !== null) v = Number(int64(p.asInt, 'asInt'));
    if (v === undefined) {
      ignore(out, kind === 'histogram' ? 'histogram_without_sum' : 'point_without_value');
      continue;
    }
    out.telemetry.points.push({
      ...origin,
      metric: name,
      kind,
      temporality,
      monotonic,
      startMs: nanosToMs(p.startTimeUnixNano, 'startTimeUnixNano'),
      timeMs: nanosToMs(p.timeUnixNano, 'timeUnixNano'),
      value: v,
      attributes: attributes(p.attributes),
    });
  }
}

/** Decodes one OTLP/JSON Export*ServiceRequest. Throws DecodeError when the body is not one. */
export function decodeJson(signal: Signal, body: Buffer): Decoded {
  let source = body.toString('utf8');
  if (source.charCodeAt(0) === 0xfeff) source = source.slice(1);
  let parsed: unknown;
  try {
    parsed = JSON.parse(source);
  } catch (error) {
    throw new DecodeError(`body is not JSON: ${jsonProblem(error)}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new DecodeError(`expected a JSON object with "${KEYS[signal][0]}"`);
  }
  const out = emptyDecoded();
  const t = out.telemetry;
  switch (signal) {
    case 'logs':
      walk(parsed as Json, signal, (origin, value) => t.logs.push(logRecord(origin, value)));
      break;
    case 'traces':
      walk(parsed as Json, signal, (origin, value) => t.spans.push(span(origin, value)));
      break;
    case 'metrics':
      walk(parsed as Json, signal, (origin, value) => metric(origin, value, out));
      break;
  }
  return out;
}
