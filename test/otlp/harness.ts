// OTLP test plumbing: a real server in-process on loopback (HTTP and gRPC on
// free ports), real OpenTelemetry exporters as its clients, native-source log
// records built from SPEC §2 events, and a capture server that keeps what it
// is sent.
import { Metadata } from '@grpc/grpc-js';
import { OTLPLogExporter as GrpcLogExporter } from '@opentelemetry/exporter-logs-otlp-grpc';
import { OTLPLogExporter as JsonLogExporter } from '@opentelemetry/exporter-logs-otlp-http';
import { OTLPLogExporter as ProtoLogExporter } from '@opentelemetry/exporter-logs-otlp-proto';
import { OTLPTraceExporter as GrpcTraceExporter } from '@opentelemetry/exporter-trace-otlp-grpc';
import { OTLPTraceExporter as JsonTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtoTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { logs } from '@opentelemetry/sdk-node';
import { SimpleSpanProcessor, TracerProvider, type SpanExporter } from '@opentelemetry/sdk-trace';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach } from 'vitest';
import type { OtelSettings } from '../../src/config.js';
import type { Limits } from '../../src/ingest/limits.js';
import { SERVICE_DETECTION } from '../../src/prices/index.js';
import { startServer, type RunningServer, type ServerOptions } from '../../src/server.js';
import { freshDb } from '../store-under-test.js';

const servers: { close(): Promise<void> }[] = [];

// Registered after store-under-test.ts's afterEach (imported above), so it
// runs first: servers close before their databases are removed.
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

export interface TestServer extends RunningServer {
  grpcUrl: string;
  stderr: string[];
}

export async function startOtlpServer(options: { bodyLimit?: number; otel?: OtelSettings; db?: string; rateLimit?: number; limits?: Limits; alerts?: ServerOptions['alerts'] } = {}): Promise<TestServer> {
  const stderr: string[] = [];
  const server = await startServer(
    {
      host: '127.0.0.1',
      port: 0,
      grpcPort: 0,
      // A database of the kind under test (SQLite, or PostgreSQL in the `postgres` project).
      db: options.db ?? (await freshDb('otlp')),
      bodyLimit: options.bodyLimit ?? 16 * 1024 * 1024,
      detection: SERVICE_DETECTION,
      synchronous: 'normal',
      project: 'default',
      otel: options.otel,
      ...(options.rateLimit !== undefined ? { rateLimit: options.rateLimit } : {}),
      ...(options.limits !== undefined ? { limits: options.limits } : {}),
      ...(options.alerts !== undefined ? { alerts: options.alerts } : {}),
    },
    (line) => stderr.push(line),
  );
  servers.push(server);
  return { ...server, grpcUrl: `http://127.0.0.1:${server.grpcPort}`, stderr };
}

// ---- native-source records (in a module free of vitest, for scripts) ----

export { nativeRecord, type NativeRecord } from './native-record.js';
import type { NativeRecord } from './native-record.js';

// ---- real exporters ---------------------------------------------------

export const LOG_TRANSPORTS = ['http/json', 'http/json+gzip', 'http/protobuf', 'http/protobuf+gzip', 'grpc', 'grpc+gzip'] as const;
export type Transport = (typeof LOG_TRANSPORTS)[number];

const gzip = (transport: string) => (transport.endsWith('+gzip') ? { compression: 'gzip' as never } : {});

export function logExporter(server: TestServer, transport: Transport, headers: Record<string, string> = {}): logs.LogRecordExporter {
  const url = `${server.url}/v1/logs`;
  if (transport.startsWith('grpc')) {
    const metadata = new Metadata();
    for (const [key, value] of Object.entries(headers)) metadata.set(key, value);
    return new GrpcLogExporter({ url: server.grpcUrl, metadata, ...gzip(transport) });
  }
  if (transport.startsWith('http/json')) return new JsonLogExporter({ url, headers, ...gzip(transport) });
  return new ProtoLogExporter({ url, headers, ...gzip(transport) });
}

export function traceExporter(server: TestServer, transport: Transport): SpanExporter {
  const url = `${server.url}/v1/traces`;
  if (transport.startsWith('grpc')) return new GrpcTraceExporter({ url: server.grpcUrl, ...gzip(transport) });
  if (transport.startsWith('http/json')) return new JsonTraceExporter({ url, ...gzip(transport) });
  return new ProtoTraceExporter({ url, ...gzip(transport) });
}

/** An export's result: code 0 is success; a failure carries the exporter's error. */
export interface ExportResult {
  code: number;
  error?: Error;
}

/** Emits the records through a batch processor in one export, and returns what the exporter reported. */
export async function emitLogs(exporter: logs.LogRecordExporter, records: readonly NativeRecord[], timestamp = Date.now()): Promise<ExportResult[]> {
  const results: ExportResult[] = [];
  const recording: logs.LogRecordExporter = {
    export: (batch, done) => exporter.export(batch, (result) => done((results.push(result), result))),
    shutdown: () => exporter.shutdown(),
    forceFlush: () => exporter.forceFlush?.() ?? Promise.resolve(),
  };
  const provider = new logs.LoggerProvider({ processors: [new logs.BatchLogRecordProcessor({ exporter: recording, maxExportBatchSize: 10_000, maxQueueSize: 10_000 })] });
  const logger = provider.getLogger('cachebreak-test', '1.0.0');
  for (const record of records) logger.emit({ ...record, timestamp });
  await provider.forceFlush();
  await provider.shutdown();
  return results;
}

/** Ends `count` plain spans (named `name`) through the exporter; returns what it reported. */
export async function emitSpans(exporter: SpanExporter, count: number, name = 'GET /health'): Promise<ExportResult[]> {
  const results: ExportResult[] = [];
  const recording: SpanExporter = {
    export: (spans, done) => exporter.export(spans, (result) => done((results.push(result), result))),
    shutdown: () => exporter.shutdown(),
  };
  const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter: recording })] });
  const tracer = provider.getTracer('cachebreak-test');
  for (let i = 0; i < count; i++) tracer.startSpan(name, { attributes: { 'http.route': '/health', i } }).end();
  await provider.forceFlush();
  await provider.shutdown();
  return results;
}

// ---- a capture server -------------------------------------------------

export interface Captured {
  path: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** An OTLP/HTTP endpoint that keeps every request and answers success in its encoding. */
export async function startCapture(): Promise<{ url: string; requests: Captured[]; close(): Promise<void> }> {
  const requests: Captured[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      requests.push({ path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) });
      const json = String(req.headers['content-type']).includes('json');
      res.writeHead(200, { 'content-type': json ? 'application/json' : 'application/x-protobuf' }).end(json ? '{}' : '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const capture = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  servers.push(capture);
  return capture;
}

/** Polls until `check` returns a value, at most `timeoutMs`. */
export async function eventually<T>(check: () => Promise<T | undefined> | T | undefined, timeoutMs = 5_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > until) throw new Error(`no result within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** The sum of a counter's samples from GET /metrics that carry the given labels (0 when none). */
export async function metric(url: string, name: string, labels: Record<string, string>, headers: Record<string, string> = {}): Promise<number> {
  const response = await fetch(`${url}/metrics`, { headers });
  if (response.status !== 200) throw new Error(`GET /metrics: ${response.status}`);
  const text = await response.text();
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    const labelText = line.slice(name.length + 1, line.lastIndexOf('}'));
    if (wanted.every((w) => labelText.split(',').includes(w))) sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}
