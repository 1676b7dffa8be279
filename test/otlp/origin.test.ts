// Where a turn came from, over OTLP: real OpenTelemetry JS SDK providers
// whose resource names the agent's version (service.version) emit native log
// records inside a real span, through a real exporter, to a running server.
// The break names that version and the span's trace and span ids, and the
// fingerprint of its cause names the version of its earliest break. A
// resource whose service.version is Node's (Gemini CLI) names no version.
import { ROOT_CONTEXT, trace } from '@opentelemetry/api';
import { logs, resources } from '@opentelemetry/sdk-node';
import { TracerProvider } from '@opentelemetry/sdk-trace';
import { describe, expect, it } from 'vitest';
import { MINUTE, SEED_TOOLS, toWire, tools, turn, usage } from '../core/scenario.js';
import { getJson } from '../e2e/server.js';
import { logExporter, nativeRecord, startOtlpServer, type TestServer } from './harness.js';

const RANGE = 'from=2026-11-30T00:00:00Z&to=2026-12-01T00:00:00Z';

/** A session whose second turn re-orders the tools: one break, sent as one native `turn` record per request. */
function session(sessionId: string, at: number) {
  return [
    turn(`${sessionId}_1`, { sessionId, at, usage: usage(48_900, 400) }),
    turn(`${sessionId}_2`, { sessionId, at: at + MINUTE, tools: tools([...SEED_TOOLS].reverse()), usage: usage(0, 49_300) }),
  ];
}

/** Emits each turn as a log record inside its own span, from an agent whose resource is `resource`; returns each request's span ids. */
async function emit(server: TestServer, resource: Record<string, string>, turns: ReturnType<typeof session>) {
  const exporter = logExporter(server, 'http/protobuf');
  const provider = new logs.LoggerProvider({ resource: resources.resourceFromAttributes(resource), processors: [new logs.SimpleLogRecordProcessor({ exporter })] });
  const tracer = new TracerProvider({ resource: resources.resourceFromAttributes(resource) }).getTracer('agent');
  const ids = new Map<string, { traceId: string; spanId: string }>();
  for (const t of turns) {
    const span = tracer.startSpan('chat claude-sonnet-4-5');
    provider.getLogger('agent').emit({ ...nativeRecord(toWire(t)), context: trace.setSpan(ROOT_CONTEXT, span) });
    span.end();
    ids.set(t.requestId, { traceId: span.spanContext().traceId, spanId: span.spanContext().spanId });
  }
  await provider.forceFlush();
  await provider.shutdown();
  return ids;
}

describe('agent version and trace over OTLP', () => {
  it('names the version, trace and span on the break, and the introducing version on its fingerprint', async () => {
    const server = await startOtlpServer();
    await emit(server, { 'service.name': 'my-agent', 'service.version': '3.4.5' }, session('early', 0));
    const ids = await emit(server, { 'service.name': 'my-agent', 'service.version': '3.5.0' }, session('late', 30 * MINUTE));

    const late = (await getJson<{ break: Record<string, unknown> }>(server.url, '/v1/breaks/late_2')).break;
    expect(late).toMatchObject({ reason: 'tools_order_changed', agentVersion: '3.5.0', ...ids.get('late_2') });
    expect(late.traceId).toMatch(/^[0-9a-f]{32}$/);
    const early = (await getJson<{ break: Record<string, unknown> }>(server.url, '/v1/breaks/early_2')).break;
    expect(early.agentVersion).toBe('3.4.5');

    const { fingerprints } = await getJson<{ fingerprints: Record<string, unknown>[] }>(server.url, `/v1/breaks/fingerprints?${RANGE}`);
    expect(fingerprints.map((f) => [f.reason, f.breaks, f.agentVersion])).toEqual([['tools_order_changed', 2, '3.4.5']]);
  });

  it('takes no version from Gemini CLI\'s resource, whose service.version is the Node version', async () => {
    const server = await startOtlpServer();
    const ids = await emit(server, { 'service.name': 'gemini-cli', 'service.version': 'v22.11.0' }, session('gemini', 0));
    const record = (await getJson<{ break: Record<string, unknown> }>(server.url, '/v1/breaks/gemini_2')).break;
    expect(record).toMatchObject({ agentVersion: null, ...ids.get('gemini_2') });
  });
});
