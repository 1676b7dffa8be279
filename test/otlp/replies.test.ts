// What OTLP clients are answered: an empty Export*ServiceResponse when all
// is taken, partial_success naming the rejected records otherwise (HTTP in
// the request's encoding, and gRPC), and the project's API key honoured on
// both transports.
import { Client, credentials, Metadata, status, type ServiceError } from '@grpc/grpc-js';
import { OTLPLogExporter as ProtoLogExporter } from '@opentelemetry/exporter-logs-otlp-proto';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { Reader } from '../../src/ingest/otlp/decode/wire.js';
import { seedSession } from '../e2e/events.js';
import { tempDir } from '../helpers.js';
import { emitLogs, logExporter, metric, nativeRecord, startCapture, startOtlpServer, type NativeRecord, type TestServer } from './harness.js';

/** Two valid records and two that are not: a turn without a model, a usage with a negative token count. */
const MIXED: NativeRecord[] = [
  ...seedSession().slice(0, 2).map(nativeRecord),
  { eventName: 'prompt_cache.turn', attributes: { requestId: 'r_bad', sessionId: 's', ts: 1, provider: 'anthropic', outputTokens: 1, uncachedInputTokens: 1 } },
  { eventName: 'prompt_cache.usage', attributes: { requestId: 'r_bad2', provider: 'anthropic', uncachedInputTokens: -4 } },
];

/** Export*ServiceResponse: partial_success = 1 {rejected = 1, error_message = 2}; undefined when empty. */
function partialOf(body: Buffer): { rejected: number; message: string } | undefined {
  if (body.length === 0) return undefined;
  const r = new Reader(body);
  expect(r.tag(body.length)).toBe(0x0a);
  const end = r.delimited(body.length);
  const out = { rejected: 0, message: '' };
  while (r.pos < end) {
    const tag = r.tag(end);
    if (tag === 0x08) out.rejected = r.uint32(end);
    else if (tag === 0x12) out.message = r.string(end);
    else r.skip(tag & 7, end);
  }
  return out;
}

function grpcExport(server: TestServer, message: Buffer, metadata = new Metadata()): Promise<{ error: ServiceError | null; response: Buffer | undefined }> {
  const client = new Client(`127.0.0.1:${server.grpcPort}`, credentials.createInsecure());
  return new Promise((resolve) => {
    client.makeUnaryRequest('/opentelemetry.proto.collector.logs.v1.LogsService/Export', (b: Buffer) => b, (b: Buffer) => b, message, metadata, (error, response) => {
      client.close();
      resolve({ error, response });
    });
  });
}

let mixedRequest: Buffer;
let validRequest: Buffer;

beforeAll(async () => {
  const capture = await startCapture();
  await emitLogs(new ProtoLogExporter({ url: `${capture.url}/v1/logs` }), MIXED);
  await emitLogs(new ProtoLogExporter({ url: `${capture.url}/v1/logs` }), MIXED.slice(0, 2));
  mixedRequest = capture.requests[0]!.body;
  validRequest = capture.requests[1]!.body;
});

async function createKey(db: string): Promise<string> {
  let key = '';
  const io = { stdout: (t: string) => (key += t), stderr: () => {}, env: {}, interactive: false };
  expect(await main(['keys', 'create', '--db', db, '--project', 'alpha', '--scope', 'ingest,read'], io)).toBe(0);
  return key.trim();
}

/** RetryInfo's delay in seconds, from google.rpc.Status details = 3 (Any {type_url = 1, value = 2 (RetryInfo {retry_delay = 1 (Duration {seconds = 1})})}). */
function retryDelayOf(status: Buffer): number | undefined {
  const fields = (body: Buffer) => {
    const r = new Reader(body);
    const out = new Map<number, Buffer | number>();
    while (r.pos < body.length) {
      const tag = r.tag(body.length);
      if ((tag & 7) === 2) {
        const end = r.delimited(body.length);
        out.set(tag >>> 3, body.subarray(r.pos, end));
        r.pos = end;
      } else if ((tag & 7) === 0) out.set(tag >>> 3, r.uint32(body.length));
      else r.skip(tag & 7, body.length);
    }
    return out;
  };
  const any = fields(status).get(3);
  if (!Buffer.isBuffer(any)) return undefined;
  const detail = fields(any);
  expect(detail.get(1)?.toString()).toBe('type.googleapis.com/google.rpc.RetryInfo');
  const duration = fields(fields(detail.get(2) as Buffer).get(1) as Buffer);
  return duration.get(1) as number;
}

describe('OTLP answers', () => {
  it('HTTP protobuf: an empty body when all is taken, partial_success when records are rejected', async () => {
    const server = await startOtlpServer();
    const ok = await fetch(`${server.url}/v1/logs`, { method: 'POST', headers: { 'content-type': 'application/x-protobuf' }, body: validRequest });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('content-type')).toBe('application/x-protobuf');
    expect(Buffer.from(await ok.arrayBuffer()).length).toBe(0);
    const mixed = await fetch(`${server.url}/v1/logs`, { method: 'POST', headers: { 'content-type': 'application/x-protobuf' }, body: mixedRequest });
    expect(mixed.status).toBe(200);
    const partial = partialOf(Buffer.from(await mixed.arrayBuffer()));
    expect(partial?.rejected).toBe(2);
    expect(partial?.message).toMatch(/^2 record\(s\) rejected: logs\[2\] \(native\): model: required; logs\[3\] \(native\): uncachedInputTokens: /);
    expect(await metric(server.url, 'cachebreak_events_total', { receiver: 'otlp_http', outcome: 'rejected' })).toBe(2);
  });

  it('HTTP JSON: {} when all is taken, partialSuccess with the count as a string otherwise', async () => {
    const server = await startOtlpServer();
    const record = (attributes: Record<string, unknown>) => ({
      eventName: 'prompt_cache.usage',
      attributes: Object.entries(attributes).map(([key, value]) => ({ key, value: typeof value === 'number' ? { intValue: value } : { stringValue: value } })),
    });
    const body = (records: unknown[]) => JSON.stringify({ resourceLogs: [{ scopeLogs: [{ logRecords: records }] }] });
    const good = record({ requestId: 'u1', sessionId: 's1', ts: 1_764_496_801_234, provider: 'openai', uncachedInputTokens: 10, cacheReadInputTokens: 0 });
    const send = (records: unknown[]) => fetch(`${server.url}/v1/logs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: body(records) });
    const ok = await send([good]);
    expect([ok.status, ok.headers.get('content-type'), await ok.text()]).toEqual([200, 'application/json', '{}']);
    const mixed = await send([good, record({ requestId: 'u2', provider: 'openai' })]);
    expect(await mixed.json()).toEqual({
      partialSuccess: { rejectedLogRecords: '1', errorMessage: expect.stringMatching(/^1 record\(s\) rejected: logs\[1\] \(native\): usage: required/) },
    });
  });

  it('gRPC: an empty response when all is taken, partial_success otherwise', async () => {
    const server = await startOtlpServer();
    const ok = await grpcExport(server, validRequest);
    expect(ok.error).toBeNull();
    expect(ok.response?.length).toBe(0);
    const mixed = await grpcExport(server, mixedRequest);
    expect(mixed.error).toBeNull();
    expect(partialOf(mixed.response!)?.rejected).toBe(2);
    expect(await metric(server.url, 'cachebreak_events_total', { receiver: 'otlp_grpc', outcome: 'rejected' })).toBe(2);
  });

  it('with API keys, both transports need an ingest key and write to its project', async () => {
    const db = join(tempDir(), 'keys.db');
    const key = await createKey(db);
    const server = await startOtlpServer({ db });

    const refused = await fetch(`${server.url}/v1/logs`, { method: 'POST', headers: { 'content-type': 'application/x-protobuf' }, body: validRequest });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('content-type')).toBe('application/x-protobuf');
    const unauthenticated = await grpcExport(server, validRequest);
    expect(unauthenticated.error).toMatchObject({ code: status.UNAUTHENTICATED, details: expect.stringContaining('an API key is required') });

    expect(await emitLogs(logExporter(server, 'http/json', { authorization: `Bearer ${key}` }), MIXED.slice(0, 2))).toEqual([{ code: 0 }]);
    expect(await emitLogs(logExporter(server, 'grpc', { authorization: `Bearer ${key}` }), MIXED.slice(0, 2))).toEqual([{ code: 0 }]);
    const turns = await fetch(`${server.url}/v1/sessions/sess_A/turns`, { headers: { authorization: `Bearer ${key}` } });
    expect(((await turns.json()) as { turns: { requestId: string }[] }).turns.map((t) => t.requestId)).toEqual(['req_01']);
    expect(await metric(server.url, 'cachebreak_events_total', { receiver: 'otlp_grpc', outcome: 'duplicate' }, { authorization: `Bearer ${key}` })).toBe(2);
  });

  it('a client over its rate limit is told to retry later: 429 with Retry-After over HTTP, RESOURCE_EXHAUSTED with RetryInfo over gRPC', async () => {
    const db = join(tempDir(), 'limited.db');
    const key = await createKey(db);
    const server = await startOtlpServer({ db, rateLimit: 1 });
    const headers = { 'content-type': 'application/x-protobuf', authorization: `Bearer ${key}` };
    const replies = [];
    for (let i = 0; i < 3; i++) replies.push(await fetch(`${server.url}/v1/logs`, { method: 'POST', headers, body: validRequest }));
    const limited = replies[2]!;
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('1');
    const body = Buffer.from(await limited.arrayBuffer());
    expect(retryDelayOf(body)).toBe(1);
    const metadata = new Metadata();
    metadata.set('authorization', `Bearer ${key}`);
    const { error } = await grpcExport(server, validRequest, metadata);
    expect(error).toMatchObject({ code: status.RESOURCE_EXHAUSTED, details: expect.stringContaining('more than 1 requests per second') });
    expect(retryDelayOf(error!.metadata.get('grpc-status-details-bin')[0] as Buffer)).toBe(1);
  });
});
