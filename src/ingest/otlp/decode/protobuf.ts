// OTLP protobuf requests (Export{Logs,Trace,Metrics}ServiceRequest) to
// Telemetry. Field numbers are those of opentelemetry-proto
// (opentelemetry/proto/{common,resource,logs,trace,metrics}/v1); unknown
// fields, and known fields with an unexpected wire type, are skipped, as
// protobuf parsers do. Case labels are whole tags: (field << 3) | wire type.
import type { Attributes, AttributeValue, LogRecord, MetricPoint, Origin, Span, SpanEvent, Temporality } from '../records.js';
import { emptyDecoded, ignore, MAX_DEPTH, type Decoded, type Signal } from './decoded.js';
import { DecodeError, Reader } from './wire.js';

type Scope = Origin['scope'];
type Range = [start: number, end: number];

const LEN = 2;
const tag = (field: number, wireType: number) => (field << 3) | wireType;

const T_STRING = tag(1, LEN);
const T_BOOL = tag(2, 0);
const T_INT = tag(3, 0);
const T_DOUBLE = tag(4, 1);
const T_ARRAY = tag(5, LEN);
const T_KVLIST = tag(6, LEN);
const T_BYTES = tag(7, LEN);

function anyValue(r: Reader, end: number, depth: number): AttributeValue {
  if (depth > MAX_DEPTH) throw new DecodeError(`values nested deeper than ${MAX_DEPTH} levels`);
  let value: AttributeValue = null;
  while (r.pos < end) {
    const t = r.tag(end);
    switch (t) {
      case T_STRING:
        value = r.string(end);
        break;
      case T_BOOL:
        value = r.uint32(end) !== 0;
        break;
      case T_INT:
        value = r.int64(end);
        break;
      case T_DOUBLE:
        value = r.double(end);
        break;
      case T_ARRAY: {
        const stop = r.delimited(end);
        const items: AttributeValue[] = [];
        while (r.pos < stop) {
          const item = r.tag(stop);
          if (item === tag(1, LEN)) items.push(anyValue(r, r.delimited(stop), depth + 1));
          else r.skip(item & 7, stop);
        }
        value = items;
        break;
      }
      case T_KVLIST: {
        const stop = r.delimited(end);
        const object: Record<string, AttributeValue> = {};
        while (r.pos < stop) {
          const item = r.tag(stop);
          if (item === tag(1, LEN)) keyValue(r, r.delimited(stop), object, depth + 1);
          else r.skip(item & 7, stop);
        }
        value = object;
        break;
      }
      case T_BYTES:
        value = r.bytes(end, 'base64');
        break;
      default:
        r.skip(t & 7, end);
    }
  }
  return value;
}

/** One KeyValue into `into`. */
function keyValue(r: Reader, end: number, into: Record<string, AttributeValue>, depth: number): void {
  let key = '';
  let value: AttributeValue = null;
  while (r.pos < end) {
    const t = r.tag(end);
    if (t === tag(1, LEN)) key = r.string(end);
    else if (t === tag(2, LEN)) value = anyValue(r, r.delimited(end), depth);
    else r.skip(t & 7, end);
  }
  // A "__proto__" key would replace the object's prototype instead of adding a field.
  if (key !== '__proto__') into[key] = value;
}

/** Appends one repeated-KeyValue field's entry to `into` (created on first use). */
function attribute(r: Reader, end: number, into: Record<string, AttributeValue>): void {
  keyValue(r, r.delimited(end), into, 0);
}

function resource(r: Reader, [start, end]: Range): Attributes {
  const attributes: Record<string, AttributeValue> = {};
  r.pos = start;
  while (r.pos < end) {
    const t = r.tag(end);
    if (t === tag(1, LEN)) attribute(r, end, attributes);
    else r.skip(t & 7, end);
  }
  return attributes;
}

function scope(r: Reader, [start, end]: Range): Scope {
  let name = '';
  let version = '';
  r.pos = start;
  while (r.pos < end) {
    const t = r.tag(end);
    if (t === tag(1, LEN)) name = r.string(end);
    else if (t === tag(2, LEN)) version = r.string(end);
    else r.skip(t & 7, end);
  }
  return { name, version };
}

const NO_RANGE: Range = [0, 0];

/**
 * Walks Resource{Logs,Spans,Metrics} (resource = 1, scopes = 2) and their
 * Scope* messages (scope = 1, items = 2). Ranges are collected first, so a
 * resource or scope that follows its items on the wire still applies to them.
 */
function walk(r: Reader, end: number, item: (origin: Origin, range: Range) => void): void {
  const resources: Range[] = [];
  while (r.pos < end) {
    const t = r.tag(end);
    if (t === tag(1, LEN)) {
      const stop = r.delimited(end);
      resources.push([r.pos, stop]);
      r.pos = stop;
    } else r.skip(t & 7, end);
  }
  for (const [start, stop] of resources) {
    let resourceRange = NO_RANGE;
    const scopes: Range[] = [];
    r.pos = start;
    while (r.pos < stop) {
      const t = r.tag(stop);
      if (t === tag(1, LEN) || t === tag(2, LEN)) {
        const s = r.delimited(stop);
        if (t === tag(1, LEN)) resourceRange = [r.pos, s];
        else scopes.push([r.pos, s]);
        r.pos = s;
      } else r.skip(t & 7, stop);
    }
    const attributes = resource(r, resourceRange);
    for (const [scopeStart, scopeStop] of scopes) {
      let scopeRange = NO_RANGE;
      const items: Range[] = [];
      r.pos = scopeStart;
      while (r.pos < scopeStop) {
        const t = r.tag(scopeStop);
        if (t === tag(1, LEN) || t === tag(2, LEN)) {
          const s = r.delimited(scopeStop);
          if (t === tag(1, LEN)) scopeRange = [r.pos, s];
          else items.push([r.pos, s]);
          r.pos = s;
        } else r.skip(t & 7, scopeStop);
      }
      const origin: Origin = { resource: attributes, scope: scope(r, scopeRange) };
      for (const range of items) item(origin, range);
    }
  }
}

function logRecord(r: Reader, origin: Origin, [start, end]: Range): LogRecord {
  let time = 0;
  let observed = 0;
  let severityNumber = 0;
  let body: AttributeValue = null;
  const attributes: Record<string, AttributeValue> = {};
  let traceId = '';
  let spanId = '';
  let eventName = '';
  r.pos = start;
  while (r.pos < end) {
    const t = r.tag(end);
    switch (t) {
      case tag(1, 1):
        time = r.fixed64Ms(end);
        break;
      case tag(2, 0):
        severityNumber = r.uint32(end) | 0;
        break;
      case tag(5, LEN):
        body = anyValue(r, r.delimited(end), 0);
        break;
      case tag(6, LEN):
        attribute(r, end, attributes);
        break;
      case tag(9, LEN):
        traceId = r.bytes(end, 'hex');
        break;
      case tag(10, LEN):
        spanId = r.bytes(end, 'hex');
        break;
      case tag(11, 1):
        observed = r.fixed64Ms(end);
        break;
      case tag(12, LEN):
        eventName = r.string(end);
        break;
      default:
        r.skip(t & 7, end);
    }
  }
  return { resource: origin.resource, scope: origin.scope, timeMs: time || observed, eventName, severityNumber, body, attributes, traceId, spanId };
}

function spanEvent(r: Reader, end: number): SpanEvent {
  let name = '';
  let timeMs = 0;
  const attributes: Record<string, AttributeValue> = {};
  while (r.pos < end) {
    const t = r.tag(end);
    if (t === tag(1, 1)) timeMs = r.fixed64Ms(end);
    else if (t === tag(2, LEN)) name = r.string(end);
    else if (t === tag(3, LEN)) attribute(r, end, attributes);
    else r.skip(t & 7, end);
  }
  return { name, timeMs, attributes };
}

function span(r: Reader, origin: Origin, [start, end]: Range): Span {
  let traceId = '';
  let spanId = '';
  let name = '';
  let startMs = 0;
  let endMs = 0;
  const attributes: Record<string, AttributeValue> = {};
  const events: SpanEvent[] = [];
  r.pos = start;
  while (r.pos < end) {
    const t = r.tag(end);
    switch (t) {
      case tag(1, LEN):
        traceId = r.bytes(end, 'hex');
        break;
      case tag(2, LEN):
        spanId = r.bytes(end, 'hex');
        break;
      case tag(5, LEN):
        name = r.string(end);
        break;
      case tag(7, 1):
        startMs = r.fixed64Ms(end);
        break;
      case tag(8, 1):
        endMs = r.fixed64Ms(end);
        break;
      case tag(9, LEN):
        attribute(r, end, attributes);
        break;
      case tag(11, LEN):
        events.push(spanEvent(r, r.delimited(end)));
        break;
      default:
        r.skip(t & 7, end);
    }
  }
  return { ...origin, name, traceId, spanId, startMs, endMs, attributes, events };
}

interface PointShape {
  metric: string;
  kind: MetricPoint['kind'];
  temporality: Temporality;
  monotonic: boolean;
}

const TEMPORALITY: readonly Temporality[] = ['unspecified', 'delta', 'cumulative'];

/**
 * One data point. Number points: value as_double = 4 or as_int = 6,
 * attributes = 7. Histogram points: sum = 5, attributes = 9. Exponential
 * histogram points: sum = 5, attributes = 1. Times are 2 (start) and 3.
 */
function dataPoint(r: Reader, end: number, origin: Origin, shape: PointShape, attributesField: number, out: Decoded): void {
  let startMs = 0;
  let timeMs = 0;
  let value: number | undefined;
  const attributes: Record<string, AttributeValue> = {};
  const number = shape.kind !== 'histogram';
  while (r.pos < end) {
    const t = r.tag(end);
    if (t === tag(2, 1)) startMs = r.fixed64Ms(end);
    else if (t === tag(3, 1)) timeMs = r.fixed64Ms(end);
    else if (t === tag(attributesField, LEN)) attribute(r, end, attributes);
    else if (t === tag(number ? 4 : 5, 1)) value = r.double(end);
    else if (number && t === tag(6, 1)) value = r.sfixed64(end);
    else r.skip(t & 7, end);
  }
  if (value === undefined) {
    ignore(out, number ? 'point_without_value' : 'histogram_without_sum');
    return;
  }
  out.telemetry.points.push({ ...origin, ...shape, startMs, timeMs, value, attributes });
}

/** Gauge (points = 1), Sum (points = 1, temporality = 2, monotonic = 3) and the histograms (points = 1, temporality = 2). */
function metricData(r: Reader, [start, end]: Range, origin: Origin, shape: PointShape, attributesField: number, out: Decoded): void {
  const points: Range[] = [];
  r.pos = start;
  while (r.pos < end) {
    const t = r.tag(end);
    if (t === tag(1, LEN)) {
      const stop = r.delimited(end);
      points.push([r.pos, stop]);
      r.pos = stop;
    } else if (t === tag(2, 0) && shape.kind !== 'gauge') shape.temporality = TEMPORALITY[r.uint32(end)] ?? 'unspecified';
    else if (t === tag(3, 0) && shape.kind === 'sum') shape.monotonic = r.uint32(end) !== 0;
    else r.skip(t & 7, end);
  }
  for (const [s, e] of points) {
    r.pos = s;
    dataPoint(r, e, origin, shape, attributesField, out);
  }
}

/** Metric: name = 1, then one of gauge = 5, sum = 7, histogram = 9, exponential_histogram = 10, summary = 11. */
function metric(r: Reader, origin: Origin, [start, end]: Range, out: Decoded): void {
  let name = '';
  let data: { kind: MetricPoint['kind']; attributesField: number; range: Range } | undefined;
  let unsupported: string | undefined;
  r.pos = start;
  while (r.pos < end) {
    const t = r.tag(end);
    if (t === tag(1, LEN)) {
      name = r.string(end);
      continue;
    }
    const kind = t === tag(5, LEN) ? 'gauge' : t === tag(7, LEN) ? 'sum' : t === tag(9, LEN) || t === tag(10, LEN) ? 'histogram' : undefined;
    if (kind !== undefined) {
      const stop = r.delimited(end);
      data = { kind, attributesField: t === tag(10, LEN) ? 1 : kind === 'histogram' ? 9 : 7, range: [r.pos, stop] };
      r.pos = stop;
    } else {
      if (t === tag(11, LEN)) unsupported = 'summary_metric';
      r.skip(t & 7, end);
    }
  }
  if (data === undefined) {
    ignore(out, unsupported ?? 'metric_without_data');
    return;
  }
  const shape: PointShape = { metric: name, kind: data.kind, temporality: 'unspecified', monotonic: false };
  metricData(r, data.range, origin, shape, data.attributesField, out);
}

/** Decodes one Export*ServiceRequest. Throws DecodeError when the bytes are not one. */
export function decodeProtobuf(signal: Signal, body: Buffer): Decoded {
  const out = emptyDecoded();
  const r = new Reader(body);
  const end = body.length;
  switch (signal) {
    case 'logs':
      walk(r, end, (origin, range) => out.telemetry.logs.push(logRecord(r, origin, range)));
      break;
    case 'traces':
      walk(r, end, (origin, range) => out.telemetry.spans.push(span(r, origin, range)));
      break;
    case 'metrics':
      walk(r, end, (origin, range) => metric(r, origin, range, out));
      break;
  }
  return out;
}
