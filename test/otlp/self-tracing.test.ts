// Self-instrumentation (process-wide, hence a file of its own): with
// OTEL_TRACES_EXPORTER=otlp, cachebreak's own HTTP handling is traced, named
// by route, and its ingest routes never are.
import { describe, expect, it } from 'vitest';
import { otelOf } from '../../src/config.js';
import { decodeRequest } from '../../src/ingest/otlp/decode/index.js';
import { startCapture, startOtlpServer } from './harness.js';

describe('self-tracing', () => {
  it('traces reads and leaves ingest untraced', async () => {
    const capture = await startCapture();
    const otel = otelOf('', { OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${capture.url}/v1/traces`, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' });
    expect(otel.breaks).toBeUndefined();
    const server = await startOtlpServer({ otel });
    const json = { 'content-type': 'application/json' };
    expect((await fetch(`${server.url}/v1/breaks`)).status).toBe(200);
    expect((await fetch(`${server.url}/v1/events`, { method: 'POST', headers: json, body: '[]' })).status).toBe(200);
    expect((await fetch(`${server.url}/v1/logs`, { method: 'POST', headers: json, body: '{}' })).status).toBe(200);
    expect((await fetch(`${server.url}/v1/traces`, { method: 'POST', headers: json, body: '{}' })).status).toBe(200);
    await server.close();
    const spans = capture.requests.flatMap((r) => decodeRequest('traces', 'json', r.body).telemetry.spans);
    expect(spans.map((s) => s.name)).toEqual(['GET /v1/breaks']);
    expect(spans[0]!.resource['service.name']).toBe('cachebreak');
  });
});
