// Bad OTLP input over HTTP and gRPC: each gets a clear error in the
// request's encoding (a google.rpc.Status), stores nothing, and leaves the
// server answering with everything stored before intact.
import { Client, credentials, Metadata, status, type ServiceError } from '@grpc/grpc-js';
import { OTLPLogExporter as ProtoLogExporter } from '@opentelemetry/exporter-logs-otlp-proto';
import { gzipSync } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import { Reader } from '../../src/ingest/otlp/decode/wire.js';
import { breaksOf, turnsOf } from '../e2e/api.js';
import { prng, seedBreak, seedSession } from '../e2e/events.js';
import { rawRequest } from '../e2e/process.js';
import { emitLogs, logExporter, nativeRecord, startCapture, startOtlpServer, type TestServer } from './harness.js';

const LIMIT = 64 * 1024;
const seed = seedSession().map(nativeRecord);

interface Status {
  code: number;
  message: string;
}

/** google.rpc.Status from protobuf: code = 1, message = 2. */
function statusOf(body: Buffer): Status {
  const r = new Reader(body);
  const out: Status = { code: 0, message: '' };
  while (r.pos < body.length) {
    const tag = r.tag(body.length);
    if (tag === 0x08) out.code = r.uint32(body.length);
    else if (tag === 0x12) out.message = r.string(body.length);
    else r.skip(tag & 7, body.length);
  }
  return out;
}

async function post(server: TestServer, path: string, body: Buffer | string, headers: Record<string, string>) {
  const response = await fetch(`${server.url}${path}`, { method: 'POST', headers, body });
  return { status: response.status, headers: response.headers, body: Buffer.from(await response.arrayBuffer()) };
}

const PROTOBUF = { 'content-type': 'application/x-protobuf' };
const JSON_TYPE = { 'content-type': 'application/json' };

function exportCall(server: TestServer, message: Buffer, options: { gzip?: boolean; metadata?: Metadata } = {}): Promise<ServiceError | null> {
  const client = new Client(`127.0.0.1:${server.grpcPort}`, credentials.createInsecure(), {
    ...(options.gzip ? { 'grpc.default_compression_algorithm': 2 } : {}),
  });
  return new Promise((resolve) => {
    client.makeUnaryRequest(
      '/opentelemetry.proto.collector.logs.v1.LogsService/Export',
      (b: Buffer) => b,
      (b: Buffer) => b,
      message,
      options.metadata ?? new Metadata(),
      (error) => {
        client.close();
        resolve(error);
      },
    );
  });
}

describe('bad OTLP input', () => {
  let server: TestServer;
  let realRequest: Buffer;

  beforeAll(async () => {
    const capture = await startCapture();
    await emitLogs(new ProtoLogExporter({ url: `${capture.url}/v1/logs` }), seed);
    realRequest = capture.requests[0]!.body;
  });

  /** A server holding the seed session, checked intact after each bad request. */
  async function seeded(): Promise<TestServer> {
    server = await startOtlpServer({ bodyLimit: LIMIT });
    expect(await emitLogs(logExporter(server, 'http/protobuf'), seed)).toEqual([{ code: 0 }]);
    return server;
  }

  async function stillIntact(): Promise<void> {
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    expect(await breaksOf(server.url)).toEqual([seedBreak()]);
    expect((await turnsOf(server.url, 'sess_A')).map((t) => t.requestId)).toEqual(['req_01', 'req_02', 'req_03', 'req_04']);
  }

  it('random bytes as protobuf: 400 with a protobuf Status naming the problem', async () => {
    await seeded();
    const random = prng(42);
    const garbage = Buffer.from(Array.from({ length: 1024 }, () => Math.floor(random() * 256)));
    const reply = await post(server, '/v1/logs', garbage, PROTOBUF);
    expect(reply.status).toBe(400);
    expect(reply.headers.get('content-type')).toBe('application/x-protobuf');
    const failure = statusOf(reply.body);
    expect(failure.code).toBe(status.INVALID_ARGUMENT);
    expect(failure.message).toMatch(/^not an OTLP logs request in protobuf: /);
    await stillIntact();
  });

  it('a truncated message: 400, and nothing of it stored', async () => {
    await seeded();
    const reply = await post(server, '/v1/logs', realRequest.subarray(0, realRequest.length - 7), PROTOBUF);
    expect(reply.status).toBe(400);
    expect(statusOf(reply.body).message).toMatch(/truncated message at byte \d+/);
    await stillIntact();
  });

  it('JSON that is not OTLP: 400 with a JSON Status', async () => {
    await seeded();
    for (const body of ['{"resourceLogs": [', '{"resourceLogs": {"a": 1}}', '"text"']) {
      const reply = await post(server, '/v1/logs', body, JSON_TYPE);
      expect(reply.status, body).toBe(400);
      expect(reply.headers.get('content-type')).toBe('application/json');
      expect(JSON.parse(reply.body.toString())).toMatchObject({ code: status.INVALID_ARGUMENT, message: expect.stringMatching(/^not an OTLP logs request in JSON/) });
    }
    await stillIntact();
  });

  it('names of Object.prototype members as an event name, a metric name or an auth_type are values like any other', async () => {
    await seeded();
    const attribute = (key: string, value: string | number) => ({ key, value: typeof value === 'number' ? { intValue: String(value) } : { stringValue: value } });
    const at = String(Date.parse('2026-11-30T11:00:00Z') * 1e6);
    for (const name of ['constructor', '__proto__', 'toString']) {
      const log = { resourceLogs: [{ scopeLogs: [{ logRecords: [{ eventName: name, timeUnixNano: at, attributes: [attribute('event.name', name)] }] }] }] };
      const sum = (type: string) => ({ aggregationTemporality: 1, isMonotonic: true, dataPoints: [{ asInt: '5', timeUnixNano: at, attributes: [attribute('type', type)] }] });
      const metric = { resourceMetrics: [{ scopeMetrics: [{ metrics: [{ name, sum: sum('input') }, { name: 'qwen-code.token.usage', sum: sum(name) }] }] }] };
      const qwen = {
        resourceLogs: [
          {
            resource: { attributes: [attribute('service.name', 'qwen-code')] },
            scopeLogs: [
              {
                logRecords: [
                  {
                    timeUnixNano: at,
                    attributes: [
                      attribute('event.name', 'qwen-code.api_response'),
                      attribute('session.id', `sess_${name}`),
                      attribute('model', 'qwen3-coder-plus'),
                      attribute('input_token_count', 100),
                      attribute('auth_type', name),
                    ],
                  },
                ],
              },
            ],
          },
        ],
      };
      for (const [path, body] of [['/v1/logs', log], ['/v1/metrics', metric], ['/v1/logs', qwen]] as const) {
        const reply = await post(server, path, JSON.stringify(body), JSON_TYPE);
        expect({ status: reply.status, body: JSON.parse(reply.body.toString()) }, `${name} in ${path}: ${JSON.stringify(body).slice(0, 80)}`).toEqual({ status: 200, body: {} });
      }
    }
    await stillIntact();
  });

  it('a content type other than protobuf or JSON: 415, answered in JSON', async () => {
    await seeded();
    const reply = await post(server, '/v1/logs', realRequest, { 'content-type': 'text/plain' });
    expect(reply.status).toBe(415);
    expect(JSON.parse(reply.body.toString())).toMatchObject({ code: status.UNIMPLEMENTED, message: expect.stringContaining('Content-Type "text/plain" is not accepted') });
    const brotli = await post(server, '/v1/logs', realRequest, { ...PROTOBUF, 'content-encoding': 'br' });
    expect(brotli.status).toBe(415);
    expect(statusOf(brotli.body).message).toContain('Content-Encoding br is not supported');
    await stillIntact();
  });

  it('oversized bodies: 413, with and without Content-Length, and after decompression (a gzip bomb)', async () => {
    await seeded();
    const big = Buffer.alloc(LIMIT + 1, 0x41);
    const declared = await post(server, '/v1/logs', big, PROTOBUF);
    expect(declared.status).toBe(413);
    expect(statusOf(declared.body)).toMatchObject({ code: status.RESOURCE_EXHAUSTED, message: expect.stringContaining(`exceeds the limit of ${LIMIT} bytes`) });
    const chunked = await rawRequest(server.url, '/v1/traces', { method: 'POST', headers: JSON_TYPE, body: [big.subarray(0, LIMIT / 2), big.subarray(LIMIT / 2)] });
    expect(chunked.status).toBe(413);
    expect(chunked.body).toMatchObject({ code: status.RESOURCE_EXHAUSTED });
    const bomb = gzipSync(Buffer.alloc(16 * 1024 * 1024));
    expect(bomb.length).toBeLessThan(LIMIT);
    const exploded = await post(server, '/v1/metrics', bomb, { ...PROTOBUF, 'content-encoding': 'gzip' });
    expect(exploded.status).toBe(413);
    expect(statusOf(exploded.body).message).toContain('decompressed body exceeds the limit');
    const corrupt = await post(server, '/v1/logs', gzipSync(realRequest).subarray(0, 40), { ...PROTOBUF, 'content-encoding': 'gzip' });
    expect(corrupt.status).toBe(400);
    expect(statusOf(corrupt.body).message).toContain('body is not valid gzip');
    await stillIntact();
  });

  it('gRPC: a garbage message is INVALID_ARGUMENT, an oversized or exploding one RESOURCE_EXHAUSTED', async () => {
    await seeded();
    const random = prng(42);
    const garbage = await exportCall(server, Buffer.from(Array.from({ length: 1024 }, () => Math.floor(random() * 256))));
    expect(garbage).toMatchObject({ code: status.INVALID_ARGUMENT, details: expect.stringMatching(/^not an OTLP request in protobuf: /) });
    const truncated = await exportCall(server, realRequest.subarray(0, realRequest.length - 7));
    expect(truncated).toMatchObject({ code: status.INVALID_ARGUMENT, details: expect.stringContaining('truncated message') });
    expect(await exportCall(server, Buffer.alloc(LIMIT + 1))).toMatchObject({ code: status.RESOURCE_EXHAUSTED });
    expect(await exportCall(server, Buffer.alloc(16 * 1024 * 1024), { gzip: true })).toMatchObject({ code: status.RESOURCE_EXHAUSTED });
    // A well-formed message still goes through, compressed or not.
    expect(await exportCall(server, realRequest, { gzip: true })).toBeNull();
    await stillIntact();
  });
});
