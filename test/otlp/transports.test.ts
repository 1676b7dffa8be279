// The same native-source records through every OTLP transport (HTTP JSON,
// HTTP protobuf, gRPC; each plain and gzipped), sent by the real
// OpenTelemetry JS exporters, store the same turns and breaks as the JSON
// ingest API does. Spans go through the same paths and are counted.
import { describe, expect, it } from 'vitest';
import { breaksOf, everything, turnsOf } from '../e2e/api.js';
import { openaiBreak, openaiSession, REALISTIC_TURNS, seedBreak, seedSession } from '../e2e/events.js';
import { emitLogs, emitSpans, LOG_TRANSPORTS, logExporter, metric, nativeRecord, startOtlpServer, traceExporter } from './harness.js';

const records = [...seedSession(), ...openaiSession()].map(nativeRecord);

describe('OTLP transports against a real server', () => {
  it('every transport stores the seed and OpenAI sessions with their breaks, identically', async () => {
    const views = await Promise.all(
      LOG_TRANSPORTS.map(async (transport) => {
        const server = await startOtlpServer();
        const results = await emitLogs(logExporter(server, transport), records);
        expect(results, transport).toEqual([{ code: 0 }]);
        for (const [sessionId, rows] of Object.entries(REALISTIC_TURNS)) {
          const turns = await turnsOf(server.url, sessionId);
          expect(
            turns.map((t) => [t.requestId, t.state, t.usage?.uncached, t.usage?.read, t.usage?.write]),
            `${transport}: ${sessionId}`,
          ).toEqual(rows);
        }
        expect(await breaksOf(server.url), transport).toEqual([openaiBreak(), seedBreak()]);
        const receiver = transport.startsWith('grpc') ? 'otlp_grpc' : 'otlp_http';
        expect(await metric(server.url, 'cachebreak_events_total', { receiver, outcome: 'accepted' }), transport).toBe(records.length);
        return { transport, view: await everything(server.url, Object.keys(REALISTIC_TURNS)) };
      }),
    );
    for (const { transport, view } of views) expect(view, transport).toEqual(views[0]!.view);
  });

  it('spans over every transport are accepted, and those with no usage are counted as ignored', async () => {
    const server = await startOtlpServer();
    for (const transport of LOG_TRANSPORTS) {
      expect(await emitSpans(traceExporter(server, transport), 2), transport).toEqual([{ code: 0 }, { code: 0 }]);
    }
    expect(await metric(server.url, 'cachebreak_otlp_records_ignored_total', { signal: 'traces' })).toBe(2 * LOG_TRANSPORTS.length);
    expect(await sessionsCount(server.url)).toBe(0);
  });

  it('a request with the same records again stores nothing new (duplicates), over HTTP and gRPC alike', async () => {
    const server = await startOtlpServer();
    for (const transport of ['http/protobuf', 'grpc'] as const) expect(await emitLogs(logExporter(server, transport), records)).toEqual([{ code: 0 }]);
    expect(await metric(server.url, 'cachebreak_events_total', { receiver: 'otlp_http', outcome: 'accepted' })).toBe(records.length);
    expect(await metric(server.url, 'cachebreak_events_total', { receiver: 'otlp_grpc', outcome: 'duplicate' })).toBe(records.length);
    expect(await breaksOf(server.url)).toEqual([openaiBreak(), seedBreak()]);
  });
});

async function sessionsCount(url: string): Promise<number> {
  const body = (await (await fetch(`${url}/v1/sessions`)).json()) as { sessions: unknown[] };
  return body.sessions.length;
}
