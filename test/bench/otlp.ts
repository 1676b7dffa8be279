// OTLP/HTTP logs ingest: 1,000-record batches of native prompt_cache.turn
// records, serialised by the real OpenTelemetry exporters (protobuf and
// JSON), posted to a server process; beside each, the decode-only rate of the
// same payloads, measured in the same run.
import type { AnyValueMap } from '@opentelemetry/api-logs';
import { OTLPLogExporter as JsonLogExporter } from '@opentelemetry/exporter-logs-otlp-http';
import { OTLPLogExporter as ProtoLogExporter } from '@opentelemetry/exporter-logs-otlp-proto';
import { logs } from '@opentelemetry/sdk-node';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeRequest, type Encoding } from '../../src/ingest/otlp/decode/index.js';
import { throughput, type Row } from './lib.js';
import { startServerProcess } from './server-process.js';
import { benchBatch, type WorkloadOptions } from './workload.js';

const BATCH = 1_000;
const SENDERS = 4;
const DAY = 86_400_000;
const CONTENT_TYPE: Record<Encoding, string> = { protobuf: 'application/x-protobuf', json: 'application/json' };

/** Every batch of the workload as the real exporter sends it: one request body per 1,000 records. */
async function payloads(encoding: Encoding, batches: number, options: WorkloadOptions): Promise<Buffer[]> {
  const bodies: Buffer[] = [];
  const capture = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      bodies.push(Buffer.concat(chunks));
      res.writeHead(200, { 'content-type': CONTENT_TYPE[encoding] }).end(encoding === 'json' ? '{}' : '');
    });
  });
  await new Promise<void>((resolve) => capture.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(capture.address() as AddressInfo).port}/v1/logs`;
  const exporter = encoding === 'json' ? new JsonLogExporter({ url }) : new ProtoLogExporter({ url });
  const provider = new logs.LoggerProvider({
    processors: [new logs.BatchLogRecordProcessor({ exporter, maxExportBatchSize: BATCH, maxQueueSize: BATCH, scheduledDelayMillis: 60_000 })],
  });
  const logger = provider.getLogger('bench-harness');
  for (let b = 0; b < batches; b++) {
    for (const { type, ...attributes } of benchBatch(b * BATCH, BATCH, options)) {
      logger.emit({ eventName: `prompt_cache.${String(type)}`, timestamp: attributes.ts as number, attributes: attributes as AnyValueMap });
    }
    await provider.forceFlush();
  }
  await provider.shutdown();
  await new Promise<void>((resolve) => capture.close(() => resolve()));
  if (bodies.length !== batches) throw new Error(`expected ${batches} requests, captured ${bodies.length}`);
  return bodies;
}

/** Posts every body, SENDERS requests in flight; returns records/s. */
async function ingest(url: string, encoding: Encoding, bodies: readonly Buffer[]): Promise<number> {
  let next = 0;
  const start = performance.now();
  const sender = async () => {
    while (next < bodies.length) {
      const body = bodies[next++]!;
      const response = await fetch(`${url}/v1/logs`, { method: 'POST', headers: { 'content-type': CONTENT_TYPE[encoding] }, body });
      const answer = await response.text();
      // Anything but an empty success (a partial success included) would make the figure meaningless.
      if (response.status !== 200 || (answer !== '' && answer !== '{}')) throw new Error(`ingest failed: ${response.status} ${answer.slice(0, 300)}`);
    }
  };
  await Promise.all(Array.from({ length: SENDERS }, sender));
  return (bodies.length * BATCH * 1000) / (performance.now() - start);
}

export async function benchOtlp(turns = 1_000_000): Promise<Row[]> {
  const batches = Math.max(1, Math.floor(Math.min(turns, 100_000) / BATCH));
  const options: WorkloadOptions = { turns: batches * BATCH, start: Date.parse('2026-11-29T00:00:00Z'), spanMs: DAY, concurrency: 64 };
  const dir = mkdtempSync(join(tmpdir(), 'cachebreak-bench-otlp-'));
  const rows: Row[] = [];
  try {
    for (const encoding of ['protobuf', 'json'] as const) {
      const bodies = await payloads(encoding, batches, options);
      const sample = bodies.slice(0, 20);
      const decodeRate = throughput(() => sample.forEach((body) => decodeRequest('logs', encoding, body)), sample.length * BATCH);
      const server = await startServerProcess(join(dir, `${encoding}.db`));
      let rate: number;
      try {
        rate = await ingest(server.url, encoding, bodies);
      } finally {
        await server.stop();
      }
      const kb = Math.round(bodies.reduce((sum, b) => sum + b.length, 0) / bodies.length / 1024);
      rows.push({
        figure: `OTLP/HTTP logs ingest, ${encoding === 'json' ? 'JSON' : 'protobuf'}, 1,000-record batches (~${kb} KB) of native prompt_cache.turn (${(batches * BATCH).toLocaleString('en-US')} records)`,
        value: rate,
        unit: 'records/s',
        baseline: { label: 'decode only, the same payloads', value: decodeRate },
        aim: '≥ 50,000 (issue 4)',
      });
    }
    return rows;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
