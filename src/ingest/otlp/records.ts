// What the OTLP decoders produce and the source mappings read: log records,
// spans and metric points with their attributes as plain values, the same
// whichever transport (HTTP protobuf, HTTP JSON, gRPC, a telemetry file) and
// encoding they came in.

/** An OTLP AnyValue as a plain value. int64 values beyond 2^53 stay decimal strings; bytes are base64. */
export type AttributeValue = string | number | boolean | null | AttributeValue[] | { [key: string]: AttributeValue };

export type Attributes = Readonly<Record<string, AttributeValue>>;

export interface Origin {
  /** Resource attributes: read selectively, never stored (they can hold a command line with prompt text). */
  resource: Attributes;
  scope: { name: string; version: string };
}

export interface LogRecord extends Origin {
  /** Epoch ms (the record's time, else its observed time). */
  timeMs: number;
  /** LogRecord.event_name (OTLP ≥ 1.5), or '' when absent. */
  eventName: string;
  severityNumber: number;
  body: AttributeValue;
  attributes: Attributes;
  traceId: string;
  spanId: string;
}

export interface SpanEvent {
  name: string;
  timeMs: number;
  attributes: Attributes;
}

export interface Span extends Origin {
  name: string;
  traceId: string;
  spanId: string;
  startMs: number;
  endMs: number;
  attributes: Attributes;
  events: SpanEvent[];
}

export type Temporality = 'delta' | 'cumulative' | 'unspecified';

/** One number from a Sum or Gauge, or a Histogram's sum, with its series' attributes. */
export interface MetricPoint extends Origin {
  metric: string;
  kind: 'sum' | 'gauge' | 'histogram';
  temporality: Temporality;
  monotonic: boolean;
  startMs: number;
  timeMs: number;
  value: number;
  attributes: Attributes;
}

/** Everything one OTLP request (or one object of a telemetry file) carried. */
export interface Telemetry {
  logs: LogRecord[];
  spans: Span[];
  points: MetricPoint[];
}
