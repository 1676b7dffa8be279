import { describe, expect, it } from 'vitest';
import type { MetricPoint } from '../../../src/ingest/otlp/records.js';
import { fixture, mapped, only, store } from './helpers.js';

const telemetry = fixture('metrics/token-usage.json');
const T0 = Date.parse('2026-11-30T10:00:00.000Z');

describe('token-usage metrics', () => {
  it('become token points with normalised kinds and a series identity, and create no turns', () => {
    const result = mapped(telemetry);
    expect(result.rejected).toEqual([]);
    expect(result.events).toEqual([]);
    expect(result.ignored).toEqual({ unknown_metric: 2, covered_by_harness_metric: 1 });
    const kinds = (source: string) => [...new Set(result.tokenPoints.filter((p) => p.source === source).map((p) => p.kind))];
    // Claude Code's input EXCLUDES the cache, so it is not "input".
    expect(kinds('claude_code')).toEqual(['uncached_input', 'output', 'cache_read', 'cache_write']);
    expect(kinds('qwen-code')).toEqual(['input', 'output', 'cache_read']);
    expect(kinds('gemini_cli')).toEqual(['input', 'output', 'cache_read', 'thought', 'tool']);
    expect(kinds('gen_ai')).toEqual(['input', 'output']);
    const claudeRead = result.tokenPoints.filter((p) => p.source === 'claude_code' && p.kind === 'cache_read');
    expect(new Set(claudeRead.map((p) => p.series)).size).toBe(1);
    expect(claudeRead[0]).toMatchObject({ model: 'claude-sonnet-4-5-20250929', temporality: 'cumulative', startMs: T0 });
    expect(claudeRead[0]!.series).toMatch(/^[0-9a-f]{16}$/);
  });

  it('adds cumulative growth once and delta windows each, through the store; an exporter retry adds nothing', async () => {
    // An exporter sends one point per series per export, so a retry repeats the last one.
    const last = telemetry.points.filter((p) => p.timeMs === Math.max(...telemetry.points.filter((q) => q.metric === p.metric).map((q) => q.timeMs)));
    const { store: s } = await store(mapped(telemetry), mapped(only({ points: last })));
    const rows = await s.stats('default', { from: T0, to: T0 + 60 * 60_000, intervalMs: 60 * 60_000, filters: {} });
    expect(rows).toEqual([
      expect.objectContaining({
        turns: 0,
        reportedTokens: {
          uncached_input: 13,
          cache_read: 36500 + 12288,
          cache_write: 19274,
          // Qwen's two delta windows, Gemini's cumulative point and the app's two histogram windows.
          input: 12480 + 20140 + 9850 + 16800 + 8900,
          output: 1100 + 512 + 736 + 420 + 310 + 300,
          thought: 310,
        },
      }),
    ]);
  });

  it('keeps different attribute sets apart, and leaves out what is not a counter', () => {
    const base = telemetry.points.find((p) => p.metric === 'gen_ai.client.token.usage' && p.resource['service.name'] === 'support-bot')!;
    const other: MetricPoint = { ...base, attributes: { ...base.attributes, 'gen_ai.request.model': 'claude-sonnet-4-5' } };
    const [a, b] = mapped(only({ points: [base, other] })).tokenPoints;
    expect(a!.series).not.toBe(b!.series);
    const odd: MetricPoint[] = [
      { ...base, kind: 'gauge', temporality: 'unspecified' },
      { ...base, kind: 'sum', monotonic: false },
      { ...base, temporality: 'unspecified' },
      { ...base, attributes: { 'gen_ai.token.type': 'audio' } },
    ];
    expect(mapped(only({ points: odd })).ignored).toEqual({
      gauge: 1,
      not_monotonic: 1,
      unspecified_temporality: 1,
      unknown_token_type: 1,
    });
    expect(mapped(only({ points: [{ ...base, value: -3 }] })).rejected).toEqual([
      { record: 'points[0] (metrics)', error: 'gen_ai.client.token.usage: expected a non-negative token count, got -3' },
    ]);
  });
});
