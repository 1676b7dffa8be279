// Re-emits decoded telemetry (the source fixtures, test/fixtures/otlp/) through
// the real OpenTelemetry JS SDK, so that a fixture reaches a running server
// the way its harness sends it: one provider per resource (the fixture's
// resource attributes, not the SDK's defaults), one logger or tracer per
// instrumentation scope, the records' own times, trace context and ids; and
// metric points as the measurements behind them, exported window by window.
import { ROOT_CONTEXT, trace, TraceFlags, type Context } from '@opentelemetry/api';
import type { AnyValue, AnyValueMap } from '@opentelemetry/api-logs';
import { logs, metrics, resources } from '@opentelemetry/sdk-node';
import { BatchSpanProcessor, TracerProvider, type IdGenerator, type SpanExporter } from '@opentelemetry/sdk-trace';
import type { Attributes, LogRecord, MetricPoint, Origin, Span } from '../../src/ingest/otlp/records.js';
import type { ExportResult } from './harness.js';

/** Groups records by resource, in the order each resource first appears. */
function byResource<R>(records: readonly R[], originOf: (record: R) => Origin = (record) => record as Origin): R[][] {
  const groups = new Map<string, R[]>();
  for (const record of records) {
    const key = JSON.stringify(originOf(record).resource);
    const group = groups.get(key) ?? [];
    group.push(record);
    groups.set(key, group);
  }
  return [...groups.values()];
}

const resourceOf = (record: Origin) => resources.resourceFromAttributes(record.resource as never);

// As Dates: the SDK tells an epoch-ms number from a performance.now()
// reading by its size; a Date it never has to guess about.
const at = (ms: number) => new Date(ms);

/** The trace context a record carries, when it carries one. */
function traceContext(traceId: string, spanId: string): Context | undefined {
  if (traceId === '' || spanId === '') return undefined;
  return trace.setSpanContext(ROOT_CONTEXT, { traceId, spanId, traceFlags: TraceFlags.SAMPLED });
}

/**
 * The exporter with every export's result kept, shared by the providers of
 * several resources: their shutdown leaves it open, the caller closes it once.
 */
function recording<T>(exporter: { export(items: T, done: (r: ExportResult) => void): void; forceFlush?(): Promise<void> }, results: ExportResult[]) {
  return {
    export: (items: T, done: (r: ExportResult) => void) => exporter.export(items, (result) => done((results.push(result), result))),
    forceFlush: () => exporter.forceFlush?.() ?? Promise.resolve(),
    shutdown: () => Promise.resolve(),
  };
}

/** Emits the log records, each resource's in one export; returns what the exporter reported per export. */
export async function replayLogs(exporter: logs.LogRecordExporter, records: readonly LogRecord[]): Promise<ExportResult[]> {
  const results: ExportResult[] = [];
  const exporting = recording(exporter, results);
  for (const group of byResource(records)) {
    const processor = new logs.BatchLogRecordProcessor({ exporter: exporting, maxExportBatchSize: 10_000, maxQueueSize: 10_000 });
    const provider = new logs.LoggerProvider({ resource: resourceOf(group[0]!), processors: [processor] });
    for (const record of group) {
      const context = traceContext(record.traceId, record.spanId);
      provider.getLogger(record.scope.name, record.scope.version).emit({
        timestamp: at(record.timeMs),
        severityNumber: record.severityNumber,
        ...(record.eventName !== '' ? { eventName: record.eventName } : {}),
        ...(record.body !== null ? { body: record.body as AnyValue } : {}),
        attributes: record.attributes as AnyValueMap,
        ...(context ? { context } : {}),
      });
    }
    await provider.forceFlush();
    await provider.shutdown();
  }
  await exporter.shutdown();
  return results;
}

/** Span attributes are primitives or arrays of them; the fixtures hold nothing else (JSON text for structures). */
const spanAttributes = (attributes: Attributes) => attributes as Record<string, string | number | boolean | string[]>;

/** Ends the spans with their own ids and times, each resource's in one export; returns what the exporter reported per export. */
export async function replaySpans(exporter: SpanExporter, spans: readonly Span[]): Promise<ExportResult[]> {
  const results: ExportResult[] = [];
  const exporting = recording(exporter, results);
  // The fixture's ids, so ids derived from them (trace:span request ids) match the mapping tests.
  let next = { traceId: '', spanId: '' };
  const ids: IdGenerator = { generateTraceId: () => next.traceId, generateSpanId: () => next.spanId };
  for (const group of byResource(spans)) {
    const processor = new BatchSpanProcessor({ exporter: exporting, maxExportBatchSize: 10_000, maxQueueSize: 10_000 });
    const provider = new TracerProvider({ resource: resourceOf(group[0]!), idGenerator: ids, spanProcessors: [processor] });
    for (const span of group) {
      next = { traceId: span.traceId, spanId: span.spanId };
      const tracer = provider.getTracer(span.scope.name, span.scope.version);
      const started = tracer.startSpan(span.name, { startTime: at(span.startMs), attributes: spanAttributes(span.attributes) }, ROOT_CONTEXT);
      for (const event of span.events) started.addEvent(event.name, spanAttributes(event.attributes), at(event.timeMs));
      started.end(at(span.endMs));
    }
    await provider.forceFlush();
    await provider.shutdown();
  }
  await exporter.shutdown();
  return results;
}

/** One series of a fixture's metric points, and what each of its export windows added. */
interface Series {
  point: MetricPoint;
  increments: number[];
}

/**
 * The measurements behind the points: a delta point is what its window
 * added, a cumulative one its growth over the one before. A retry (the same
 * series and time again) is one window.
 */
function seriesOf(points: readonly MetricPoint[]): Series[] {
  const series = new Map<string, Map<number, MetricPoint>>();
  for (const point of points) {
    const key = JSON.stringify([point.resource, point.scope, point.metric, point.attributes]);
    const windows = series.get(key) ?? new Map<number, MetricPoint>();
    windows.set(point.timeMs, point);
    series.set(key, windows);
  }
  return [...series.values()].map((windows) => {
    const ordered = [...windows.values()].sort((a, b) => a.timeMs - b.timeMs);
    let before = 0;
    const increments = ordered.map((point) => {
      const added = point.temporality === 'cumulative' ? point.value - before : point.value;
      before = point.value;
      return added;
    });
    return { point: ordered[0]!, increments };
  });
}

/**
 * Records the measurements behind the points on counters (sums) and
 * histograms, a window at a time, each window collected and exported by a
 * periodic reader with the exporter's temporality; then `repeats` more
 * exports with nothing new (a cumulative exporter sends its totals again).
 */
export async function replayPoints(exporter: metrics.PushMetricExporter, points: readonly MetricPoint[], repeats = 1): Promise<ExportResult[]> {
  const results: ExportResult[] = [];
  const exporting: metrics.PushMetricExporter = {
    ...recording(exporter, results),
    // The reader asks the exporter which temporality to aggregate with.
    ...(exporter.selectAggregationTemporality ? { selectAggregationTemporality: exporter.selectAggregationTemporality.bind(exporter) } : {}),
    ...(exporter.selectAggregation ? { selectAggregation: exporter.selectAggregation.bind(exporter) } : {}),
  };
  const all = seriesOf(points);
  const providers: metrics.MeterProvider[] = [];
  const record = new Map<Series, (value: number) => void>();
  for (const group of byResource(all, (s) => s.point)) {
    const reader = new metrics.PeriodicExportingMetricReader({ exporter: exporting, exportIntervalMillis: 3_600_000 });
    const provider = new metrics.MeterProvider({ resource: resourceOf(group[0]!.point), readers: [reader] });
    providers.push(provider);
    const instruments = new Map<string, (value: number, attributes: Attributes) => void>();
    for (const series of group) {
      const { scope, metric, kind, attributes } = series.point;
      const key = JSON.stringify([scope, metric]);
      if (!instruments.has(key)) {
        const meter = provider.getMeter(scope.name, scope.version);
        if (kind === 'histogram') {
          const histogram = meter.createHistogram(metric);
          instruments.set(key, (value, at) => histogram.record(value, at as never));
        } else {
          const counter = meter.createCounter(metric);
          instruments.set(key, (value, at) => counter.add(value, at as never));
        }
      }
      const instrument = instruments.get(key)!;
      record.set(series, (value) => instrument(value, attributes));
    }
  }
  const windows = Math.max(...all.map((s) => s.increments.length));
  for (let window = 0; window < windows + repeats; window++) {
    for (const series of all) {
      const added = series.increments[window];
      if (added !== undefined) record.get(series)!(added);
    }
    for (const provider of providers) await provider.forceFlush();
  }
  for (const provider of providers) await provider.shutdown();
  await exporter.shutdown();
  return results;
}
