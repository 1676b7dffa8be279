// Exporting breaks: a break detected by one cachebreak arrives as a
// `prompt_cache_break` log record, with the SPEC §6 fields as attributes, at
// another OTLP receiver: a second cachebreak (HTTP and gRPC), which counts
// it as a record it does not use, and a capture server that shows its content.
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import type { OtelSettings, OtlpProtocol } from '../../src/config.js';
import { decodeRequest } from '../../src/ingest/otlp/decode/index.js';
import { seedBreak, seedSession } from '../e2e/events.js';
import { metric, startCapture, startOtlpServer, type TestServer } from './harness.js';

function exportingTo(url: string, protocol: OtlpProtocol): OtelSettings {
  return { serviceName: 'cachebreak', breaks: { url, protocol, headers: { 'x-team': 'platform' } }, traces: undefined };
}

/** Ingests the seed session (one break) over the JSON API, then closes the server, which flushes the export. */
async function detectSeedBreak(server: TestServer): Promise<void> {
  const reply = await fetch(`${server.url}/v1/events`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(seedSession()) });
  expect(reply.status).toBe(200);
  await server.close();
}

describe('break export', () => {
  it('over OTLP/HTTP protobuf and gRPC, a second cachebreak receives the break and counts it as an unrecognised event', async () => {
    const receiver = await startOtlpServer();
    await detectSeedBreak(await startOtlpServer({ otel: exportingTo(`${receiver.url}/v1/logs`, 'http/protobuf') }));
    expect(await metric(receiver.url, 'cachebreak_otlp_records_ignored_total', { signal: 'logs', reason: 'unknown_event' })).toBe(1);
    await detectSeedBreak(await startOtlpServer({ otel: exportingTo(receiver.grpcUrl, 'grpc') }));
    expect(await metric(receiver.url, 'cachebreak_otlp_records_ignored_total', { signal: 'logs', reason: 'unknown_event' })).toBe(2);
    expect(await metric(receiver.url, 'cachebreak_events_total', { outcome: 'accepted' })).toBe(0);
  });

  it('carries the SPEC §6 fields as attributes, toolChanges flattened, with the configured headers', async () => {
    const capture = await startCapture();
    await detectSeedBreak(await startOtlpServer({ otel: exportingTo(`${capture.url}/v1/logs`, 'http/json') }));
    expect(capture.requests).toHaveLength(1);
    const [request] = capture.requests;
    expect(request!.path).toBe('/v1/logs');
    expect(request!.headers['x-team']).toBe('platform');
    const body = request!.headers['content-encoding'] === 'gzip' ? gunzipSync(request!.body) : request!.body;
    const [log] = decodeRequest('logs', 'json', body).telemetry.logs;
    const want = seedBreak();
    expect(log).toMatchObject({
      eventName: 'prompt_cache_break',
      severityNumber: 13,
      timeMs: Date.parse(want.ts),
      resource: { 'service.name': 'cachebreak' },
      scope: { name: 'cachebreak' },
    });
    expect(log!.body).toContain('tools_order_changed');
    const { toolChanges, cause, changedSystemBlocks, firstChangedMessageIndex, providerDiagnosis, agentVersion, traceId, spanId, ...fields } = want;
    expect(log!.attributes).toEqual({
      project: 'default',
      ...fields,
      'toolChanges.added': toolChanges.added,
      'toolChanges.removed': toolChanges.removed,
      'toolChanges.schemaChanged': toolChanges.schemaChanged,
      'toolChanges.moved': toolChanges.moved,
    });
    // The null fields are left out rather than sent empty.
    expect([cause, changedSystemBlocks, firstChangedMessageIndex, providerDiagnosis, agentVersion, traceId, spanId]).toEqual([null, null, null, null, null, null, null]);
  });

  it('sends a break again, marked cachebreak.revision, when a late request judges it again', async () => {
    const capture = await startCapture();
    const server = await startOtlpServer({ otel: exportingTo(`${capture.url}/v1/logs`, 'http/json') });
    // The seed without its second request: the third is judged against the first.
    const late = seedSession().filter((event) => event.requestId === 'req_02');
    const post = (events: unknown[]) => fetch(`${server.url}/v1/events`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(events) });
    expect((await post(seedSession().filter((event) => event.requestId !== 'req_02'))).status).toBe(200);
    expect((await post(late)).status).toBe(200);
    await server.close();
    const logs = capture.requests.flatMap((request) => {
      const body = request.headers['content-encoding'] === 'gzip' ? gunzipSync(request.body) : request.body;
      return decodeRequest('logs', 'json', body).telemetry.logs;
    });
    const third = logs.filter((log) => log.attributes.requestId === 'req_03');
    expect(third.map((log) => [log.attributes.previousRequestId, log.attributes['cachebreak.revision']])).toEqual([
      ['req_01', undefined],
      ['req_02', true],
    ]);
    // The revision carries the record as the API now serves it.
    const { toolChanges: _changes, cause: _cause, changedSystemBlocks: _blocks, firstChangedMessageIndex: _index, providerDiagnosis: _diagnosis, agentVersion: _version, traceId: _trace, spanId: _span, ...fields } = seedBreak();
    expect(third[1]!.attributes).toMatchObject({ ...fields, 'cachebreak.revision': true });
  });
});
