// The OTLP decoders on what real OpenTelemetry JS exporters send (logs,
// traces, metrics; JSON and protobuf, each plain and gzipped): all four give
// identical records. Hand-built protobuf covers what the JS SDK never sends.
import { OTLPMetricExporter as JsonMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http';
import { OTLPMetricExporter as ProtoMetricExporter } from '@opentelemetry/exporter-metrics-otlp-proto';
import { OTLPLogExporter as JsonLogExporter } from '@opentelemetry/exporter-logs-otlp-http';
import { OTLPLogExporter as ProtoLogExporter } from '@opentelemetry/exporter-logs-otlp-proto';
import { OTLPTraceExporter as JsonTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtoTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { logs, metrics } from '@opentelemetry/sdk-node';
import { SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { decodeRequest, DecodeError, type Decoded, type Signal } from '../../src/ingest/otlp/decode/index.js';
import { prng } from '../e2e/events.js';
import { startCapture, type Captured } from './harness.js';
import { bytes, double, fixed64, keyValue, logsRequest, varint } from './protowire.js';

const gzip = { compression: 'gzip' as never };

const ATTRIBUTES = {
  s: 'text',
  i: 42,
  negative: -7,
  large: 2 ** 40,
  d: 3.25,
  yes: true,
  no: false,
  zero: 0,
  empty: '',
  strings: ['a', 'b'],
  mixed: [1, 'a', true],
  map: { a: 1, nested: { list: ['x'] } },
  raw: new Uint8Array([1, 2, 255]),
};

function decodeCaptured(signal: Signal, captured: Captured): Decoded {
  const body = captured.headers['content-encoding'] === 'gzip' ? gunzipSync(captured.body) : captured.body;
  return decodeRequest(signal, String(captured.headers['content-type']).includes('json') ? 'json' : 'protobuf', body);
}

const ENCODINGS = [
  ['application/json', 'identity'],
  ['application/x-protobuf', 'identity'],
  ['application/json', 'gzip'],
  ['application/x-protobuf', 'gzip'],
];

/** The four encodings of one signal, in order: JSON, protobuf, JSON+gzip, protobuf+gzip; `each` requests per encoding. */
async function captureFour(signal: Signal, send: (url: string, variant: number) => Promise<void>, each = 1): Promise<Decoded[][]> {
  const capture = await startCapture();
  for (let variant = 0; variant < 4; variant++) await send(`${capture.url}/v1/${signal}`, variant);
  const requests = capture.requests.map((r) => ({ encoding: [r.headers['content-type'], r.headers['content-encoding'] ?? 'identity'], decoded: decodeCaptured(signal, r) }));
  expect(requests.map((r) => r.encoding)).toEqual(ENCODINGS.flatMap((e) => Array<string[]>(each).fill(e)));
  return ENCODINGS.map((_, i) => requests.slice(i * each, (i + 1) * each).map((r) => r.decoded));
}

describe('OTLP decoding of real exporter payloads', () => {
  it('logs: JSON, protobuf, and both gzipped decode to identical records', async () => {
    const decoded = await captureFour('logs', async (url, variant) => {
      const options = { url, ...(variant >= 2 ? gzip : {}) };
      const exporter = variant % 2 === 0 ? new JsonLogExporter(options) : new ProtoLogExporter(options);
      const provider = new logs.LoggerProvider({ processors: [new logs.SimpleLogRecordProcessor({ exporter })] });
      provider.getLogger('scope-x', '1.2.3').emit({
        eventName: 'prompt_cache.turn',
        timestamp: [1_767_225_600, 123_456_789],
        severityNumber: 9,
        body: { kind: 'map body' },
        attributes: ATTRIBUTES,
      });
      await provider.shutdown();
    }).then((all) => all.map(([d]) => d!));
    for (const d of decoded) expect(d).toEqual(decoded[0]);
    const record = decoded[0]!.telemetry.logs[0]!;
    expect(record).toMatchObject({
      scope: { name: 'scope-x', version: '1.2.3' },
      // 1767225600.123456789 s: whole milliseconds, not rounded up.
      timeMs: 1_767_225_600_123,
      eventName: 'prompt_cache.turn',
      severityNumber: 9,
      body: { kind: 'map body' },
      traceId: '',
      spanId: '',
    });
    expect(record.attributes).toEqual({ ...ATTRIBUTES, raw: 'AQL/' });
    expect(record.resource['telemetry.sdk.language']).toBe('nodejs');
  });

  it('traces: spans with events, ids as lower-case hex, decode alike in all four encodings', async () => {
    const decoded = await captureFour('traces', async (url, variant) => {
      const options = { url, ...(variant >= 2 ? gzip : {}) };
      const exporter = variant % 2 === 0 ? new JsonTraceExporter(options) : new ProtoTraceExporter(options);
      const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
      const span = provider.getTracer('tracer-x').startSpan('chat claude', { startTime: [1_767_225_600, 5_000_000], attributes: { 'gen_ai.usage.input_tokens': 1200 } });
      span.addEvent('gen_ai.choice', { index: 0 }, [1_767_225_601, 0]);
      span.end([1_767_225_602, 999_999]);
      await provider.shutdown();
    }).then((all) => all.map(([d]) => d!));
    // Every variant made its own span (own ids); everything else must agree.
    const comparable = decoded.map((d) => d.telemetry.spans.map(({ traceId, spanId, ...rest }) => ({ traceId: traceId.length, spanId: spanId.length, ...rest })));
    for (const c of comparable) expect(c).toEqual(comparable[0]);
    const span = decoded[1]!.telemetry.spans[0]!;
    expect(span.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(span.spanId).toMatch(/^[0-9a-f]{16}$/);
    expect(span).toMatchObject({
      name: 'chat claude',
      startMs: 1_767_225_600_005,
      endMs: 1_767_225_602_000,
      attributes: { 'gen_ai.usage.input_tokens': 1200 },
      events: [{ name: 'gen_ai.choice', timeMs: 1_767_225_601_000, attributes: { index: 0 } }],
    });
  });

  it('metrics: sums (delta and cumulative), gauges and histograms decode alike in all four encodings', async () => {
    const decoded = await captureFour('metrics', async (url, variant) => {
      const options = { url, ...(variant >= 2 ? gzip : {}) };
      for (const temporalityPreference of [0, 1] as const) {
        const exporter = variant % 2 === 0 ? new JsonMetricExporter({ ...options, temporalityPreference }) : new ProtoMetricExporter({ ...options, temporalityPreference });
        const reader = new metrics.PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 60_000 });
        const provider = new metrics.MeterProvider({ readers: [reader] });
        const meter = provider.getMeter('meter-x');
        meter.createCounter('claude_code.token.usage').add(1500, { type: 'cacheRead', model: 'claude-sonnet-4-5' });
        meter.createHistogram('gen_ai.client.token.usage').record(320, { 'gen_ai.token.type': 'output' });
        meter.createGauge('queue.depth').record(2.5);
        await provider.shutdown();
      }
    }, 2);
    // Two exports (cumulative, then delta) per encoding: compare the points without their times.
    const points = decoded.map((requests) => requests.flatMap((d) => d.telemetry.points.map(({ startMs, timeMs, ...rest }) => rest)));
    for (const p of points) expect(p).toEqual(points[0]);
    const point = (metric: string, temporality: string) => points[0]!.find((p) => p.metric === metric && p.temporality === temporality);
    expect(point('claude_code.token.usage', 'cumulative')).toMatchObject({ kind: 'sum', monotonic: true, value: 1500, attributes: { type: 'cacheRead' } });
    expect(point('claude_code.token.usage', 'delta')).toMatchObject({ kind: 'sum', value: 1500 });
    expect(point('gen_ai.client.token.usage', 'cumulative')).toMatchObject({ kind: 'histogram', value: 320 });
    expect(point('queue.depth', 'unspecified')).toMatchObject({ kind: 'gauge', value: 2.5 });
  });
});

const anyInt = (n: bigint) => varint(3, n);

describe('OTLP protobuf decoding of hand-built messages', () => {
  it('int64 attributes beyond 2^53 stay exact as decimal strings; within it they are numbers', () => {
    const record = Buffer.concat([
      bytes(6, keyValue('max', anyInt(9_223_372_036_854_775_807n))),
      bytes(6, keyValue('min', anyInt(-9_223_372_036_854_775_808n))),
      bytes(6, keyValue('safe', anyInt(9_007_199_254_740_991n))),
      bytes(6, keyValue('unsafe', anyInt(9_007_199_254_740_993n))),
      bytes(6, keyValue('negative', anyInt(-5n))),
      bytes(6, keyValue('negativeSafe', anyInt(-9_007_199_254_740_991n))),
    ]);
    const { attributes } = decodeRequest('logs', 'protobuf', logsRequest([record])).telemetry.logs[0]!;
    expect(attributes).toEqual({
      max: '9223372036854775807',
      min: '-9223372036854775808',
      safe: 9_007_199_254_740_991,
      unsafe: '9007199254740993',
      negative: -5,
      negativeSafe: -9_007_199_254_740_991,
    });
    const json = {
      resourceLogs: [{ scopeLogs: [{ logRecords: [{ attributes: [{ key: 'max', value: { intValue: '9223372036854775807' } }, { key: 'n', value: { intValue: '-5' } }] }] }] }],
    };
    expect(decodeRequest('logs', 'json', Buffer.from(JSON.stringify(json))).telemetry.logs[0]!.attributes).toEqual({ max: '9223372036854775807', n: -5 });
  });

  it('reads a resource and scope that follow their records, skips unknown fields, and falls back to the observed time', () => {
    const record = Buffer.concat([
      varint(99, 7), // unknown field
      fixed64(11, 1_767_225_600_999_999_999n), // observed time only
      bytes(12, 'prompt_cache.usage'),
      bytes(9, Buffer.from('0af7651916cd43dd8448eb211c80319c', 'hex')),
      bytes(5, double(4, 1.5)),
      bytes(6, keyValue('__proto__', bytes(1, 'polluted'))),
    ]);
    const scopeLogs = Buffer.concat([bytes(2, record), bytes(1, bytes(1, 'late-scope'), bytes(2, 'v9'))]);
    const body = bytes(1, bytes(2, scopeLogs), bytes(1, bytes(1, keyValue('service.name', bytes(1, 'late-resource')))));
    const [log] = decodeRequest('logs', 'protobuf', body).telemetry.logs;
    expect(log).toEqual({
      resource: { 'service.name': 'late-resource' },
      scope: { name: 'late-scope', version: 'v9' },
      timeMs: 1_767_225_600_999,
      eventName: 'prompt_cache.usage',
      severityNumber: 0,
      body: 1.5,
      attributes: {},
      traceId: '0af7651916cd43dd8448eb211c80319c',
      spanId: '',
    });
    expect(Object.getPrototypeOf(log!.attributes)).toBe(Object.prototype);
  });

  it('counts summaries and histograms without a sum as ignored, not as points', () => {
    const metric = (name: string, data: Buffer) => bytes(2, bytes(1, name), data);
    const scope = Buffer.concat([
      metric('summary', bytes(11, bytes(1, varint(4, 1)))),
      metric('hist', bytes(9, bytes(1, fixed64(4, 3n)), varint(2, 1))),
      metric('sum', bytes(7, bytes(1, double(4, 2)), varint(2, 2), varint(3, 1))),
    ]);
    const decoded = decodeRequest('metrics', 'protobuf', bytes(1, bytes(2, scope)));
    expect(decoded.ignored).toEqual({ summary_metric: 1, histogram_without_sum: 1 });
    expect(decoded.telemetry.points).toMatchObject([{ metric: 'sum', kind: 'sum', temporality: 'cumulative', monotonic: true, value: 2 }]);
  });

  it('reads a temporality named after a member of Object.prototype as unspecified', () => {
    for (const aggregationTemporality of ['constructor', '__proto__', 'toString']) {
      const body = { resourceMetrics: [{ scopeMetrics: [{ metrics: [{ name: 'sum', sum: { aggregationTemporality, dataPoints: [{ asDouble: 2 }] } }] }] }] };
      const decoded = decodeRequest('metrics', 'json', Buffer.from(JSON.stringify(body)));
      expect(decoded.telemetry.points).toMatchObject([{ metric: 'sum', temporality: 'unspecified', value: 2 }]);
    }
  });

  it('refuses truncated messages, invalid wire types and values nested without end', () => {
    const record = Buffer.concat([bytes(12, 'prompt_cache.turn'), bytes(6, keyValue('k', bytes(1, 'value')))]);
    const whole = logsRequest([record]);
    for (let cut = 1; cut < whole.length; cut++) {
      // Every prefix either fails cleanly or is a shorter valid message; none throws anything else.
      try {
        decodeRequest('logs', 'protobuf', whole.subarray(0, cut));
      } catch (error) {
        expect(error).toBeInstanceOf(DecodeError);
      }
    }
    expect(() => decodeRequest('logs', 'protobuf', whole.subarray(0, whole.length - 3))).toThrow(/truncated/);
    expect(() => decodeRequest('logs', 'protobuf', Buffer.from([0x0b]))).toThrow(/wire type 3/);
    let deep = bytes(1, 'leaf');
    for (let i = 0; i < 40; i++) deep = bytes(5, bytes(1, deep));
    expect(() => decodeRequest('logs', 'protobuf', logsRequest([bytes(5, deep)]))).toThrow(/nested deeper/);
  });

  it('never throws anything but DecodeError on random bytes', () => {
    const random = prng(7);
    let refused = 0;
    for (let i = 0; i < 300; i++) {
      const body = Buffer.from(Array.from({ length: 1 + Math.floor(random() * 512) }, () => Math.floor(random() * 256)));
      for (const signal of ['logs', 'traces', 'metrics'] as const) {
        try {
          decodeRequest(signal, 'protobuf', body);
        } catch (error) {
          expect(error).toBeInstanceOf(DecodeError);
          refused++;
        }
      }
    }
    expect(refused).toBeGreaterThan(800);
  });
});

describe('OTLP JSON decoding', () => {
  it('accepts upper-case hex ids, int64 as numbers or strings, enum integers and "NaN" doubles', () => {
    const json = {
      resourceSpans: [
        {
          scopeSpans: [
            {
              spans: [
                {
                  traceId: '0AF7651916CD43DD8448EB211C80319C',
                  spanId: 'B7AD6B7169203331',
                  name: 'llm',
                  kind: 3,
                  startTimeUnixNano: 1_767_225_600_000_000_000,
                  endTimeUnixNano: '1767225601000000000',
                  attributes: [
                    { key: 'a', value: { intValue: 12 } },
                    { key: 'b', value: { intValue: '13' } },
                    { key: 'c', value: { doubleValue: 'NaN' } },
                    { key: 'd', value: {} },
                  ],
                },
              ],
            },
          ],
        },
      ],
    };
    const [span] = decodeRequest('traces', 'json', Buffer.from(JSON.stringify(json))).telemetry.spans;
    expect(span).toMatchObject({ traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', startMs: 1_767_225_600_000, endMs: 1_767_225_601_000 });
    expect(span!.attributes).toEqual({ a: 12, b: 13, c: NaN, d: null });
  });

  it('refuses a body that is not JSON, or not an object, or with a list where an object belongs', () => {
    expect(() => decodeRequest('logs', 'json', Buffer.from('{"resourceLogs": ['))).toThrow(/not JSON/);
    expect(() => decodeRequest('logs', 'json', Buffer.from('[]'))).toThrow(/expected a JSON object with "resourceLogs"/);
    expect(() => decodeRequest('logs', 'json', Buffer.from('{"resourceLogs": {}}'))).toThrow(/resourceLogs: expected an array/);
    expect(decodeRequest('logs', 'json', Buffer.from('{}')).telemetry).toEqual({ logs: [], spans: [], points: [] });
  });
});
