import { describe, expect, it } from 'vitest';
import type { LogRecord, Telemetry } from '../../../src/ingest/otlp/records.js';
import { SOURCES } from '../../../src/ingest/otlp/sources/index.js';
import { fixture, mapped } from './helpers.js';

const ALL = [
  'qwen-code/0.24.4.json',
  'gemini-cli/0.61.0.json',
  'claude-code/2.1.88.json',
  'claude-code/2.1.332.json',
  'genai/semconv-1.41.json',
  'openinference/openai-0.1.json',
  'vercel-ai/ai-6.json',
  'vercel-ai/ai-5.json',
  'metrics/token-usage.json',
].map(fixture);

const origin = { resource: { 'service.name': 'checkout' }, scope: { name: 'app', version: '1' } };
const record = (over: Partial<LogRecord>): LogRecord => ({
  ...origin,
  timeMs: 1,
  eventName: '',
  severityNumber: 9,
  body: 'GET /health 200',
  attributes: {},
  traceId: '',
  spanId: '',
  ...over,
});

describe('mapTelemetry', () => {
  it('offers cachebreak’s own records first, then each harness, then the generic conventions', () => {
    expect(SOURCES.map((s) => s.name)).toEqual(['native', 'claude-code', 'qwen-code', 'gemini-cli', 'vercel-ai', 'openinference', 'genai', 'metrics']);
  });

  it('maps every source of one mixed request as it maps each alone', () => {
    const mixed: Telemetry = {
      logs: ALL.flatMap((t) => t.logs),
      spans: ALL.flatMap((t) => t.spans),
      points: ALL.flatMap((t) => t.points),
    };
    const alone = ALL.map((t) => mapped(t));
    const together = mapped(mixed);
    expect(together.rejected).toEqual([]);
    // Logs come before spans in one request, so only the order differs.
    const sorted = (items: unknown[]) => items.map((item) => JSON.stringify(item)).sort();
    expect(sorted(together.events)).toEqual(sorted(alone.flatMap((r) => r.events)));
    expect(together.tokenPoints).toEqual(alone.flatMap((r) => r.tokenPoints));
    const sum: Record<string, number> = {};
    for (const r of alone) for (const [k, n] of Object.entries(r.ignored)) sum[k] = (sum[k] ?? 0) + n;
    expect(together.ignored).toEqual(sum);
  });

  it('counts what no source claims by reason, and never fails on it', () => {
    const result = mapped({
      logs: [record({}), record({ attributes: { 'event.name': 'checkout.order_placed' } }), record({ body: { nested: true } })],
      spans: [{ ...origin, name: 'GET /cart', traceId: 'a'.repeat(32), spanId: 'b'.repeat(16), startMs: 0, endMs: 5, attributes: { 'http.route': '/cart' }, events: [] }],
      points: [{ ...origin, metric: 'http.server.duration', kind: 'histogram', temporality: 'delta', monotonic: false, startMs: 0, timeMs: 1, value: 3, attributes: {} }],
    });
    expect(result).toEqual({
      events: [],
      origins: [],
      tokenPoints: [],
      halves: [],
      ignored: { unknown_event: 3, no_usage: 1, unknown_metric: 1 },
      rejected: [],
    });
  });

  it('rejects a malformed record and keeps the others of the same request', () => {
    const [qwen] = ALL;
    const good = qwen!.logs.filter((r) => r.attributes['event.name'] === 'qwen-code.api_response');
    const bad = { ...good[0]!, attributes: { ...good[0]!.attributes, input_token_count: 'many' } };
    const result = mapped({ logs: [bad, ...good], spans: [], points: [] });
    expect(result.events).toHaveLength(good.length);
    expect(result.rejected).toEqual([
      { record: 'logs[0] (qwen-code)', error: 'input_token_count: expected a non-negative integer, got a non-numeric string' },
    ]);
  });
});
