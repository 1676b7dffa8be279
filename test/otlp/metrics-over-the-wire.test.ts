// Token-usage metrics (claude_code.token.usage, qwen-code.token.usage,
// gemini_cli.token.usage, gen_ai.client.token.usage) sent by the real
// OpenTelemetry JS metrics SDK and OTLP metric exporters to /v1/metrics of a
// running server, with cumulative and with delta temporality, read back
// through GET /v1/stats. The measurements are those behind the points of
// test/fixtures/otlp/metrics/token-usage.json, so the totals are the ones
// test/otlp/sources/metrics.test.ts expects from the in-process mapping.
// Each window is exported as it ends and the last export is repeated with
// nothing new: a cumulative total counted as new tokens, or a delta window
// read as a running total, changes the sums.
import { AggregationTemporalityPreference, OTLPMetricExporter as JsonMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http';
import { OTLPMetricExporter as ProtoMetricExporter } from '@opentelemetry/exporter-metrics-otlp-proto';
import { describe, expect, it } from 'vitest';
import { getJson } from '../e2e/process.js';
import { sessionsOf } from '../e2e/api.js';
import { metric, startOtlpServer } from './harness.js';
import { replayPoints } from './replay.js';
import { fixture } from './sources/helpers.js';

const points = fixture('metrics/token-usage.json').points;

/** As sources/metrics.test.ts: Claude Code's input EXCLUDES the cache, so it is uncached_input, not input. */
const BY_MODEL: Record<string, Record<string, number>> = {
  'claude-sonnet-4-5-20250929': { uncached_input: 13, output: 1100, cache_read: 36500, cache_write: 19274 },
  'qwen3-coder-plus': { input: 12480 + 20140, output: 512 + 736, cache_read: 12288 },
  'gemini-2.5-pro': { input: 9850, output: 420, thought: 310 },
  'claude-haiku-4-5': { input: 16800 + 8900, output: 310 + 300 },
};

interface Bucket {
  turns: number;
  group?: string;
  reportedTokens?: Record<string, number>;
}

/** The reported tokens of every bucket from `from` to a minute from now, added up (per group when grouped). */
async function reported(url: string, from: number, groupBy?: string): Promise<{ tokens: Record<string, Record<string, number>>; turns: number }> {
  const range = `from=${new Date(from).toISOString()}&to=${new Date(Date.now() + 60_000).toISOString()}`;
  const body = await getJson<{ buckets: Bucket[] }>(url, `/v1/stats?${range}&interval=1m${groupBy ? `&groupBy=${groupBy}` : ''}`);
  const tokens: Record<string, Record<string, number>> = {};
  let turns = 0;
  for (const bucket of body.buckets) {
    turns += bucket.turns;
    const sums = (tokens[bucket.group ?? ''] ??= {});
    for (const [kind, value] of Object.entries(bucket.reportedTokens ?? {})) sums[kind] = (sums[kind] ?? 0) + value;
  }
  return { tokens, turns };
}

const total = (byModel: Record<string, Record<string, number>>) => {
  const sums: Record<string, number> = {};
  for (const kinds of Object.values(byModel)) for (const [kind, value] of Object.entries(kinds)) sums[kind] = (sums[kind] ?? 0) + value;
  return sums;
};

const TEMPORALITIES = { cumulative: AggregationTemporalityPreference.CUMULATIVE, delta: AggregationTemporalityPreference.DELTA };
const ENCODINGS = { 'http/json': JsonMetricExporter, 'http/protobuf': ProtoMetricExporter };

describe('token-usage metrics from the real OTel metrics SDK', () => {
  it.each(Object.keys(TEMPORALITIES) as (keyof typeof TEMPORALITIES)[])(
    '%s temporality: /v1/stats shows each model\'s reported tokens once, over HTTP JSON and protobuf, and no turns',
    async (temporality) => {
      await Promise.all(
        Object.entries(ENCODINGS).map(async ([encoding, Exporter]) => {
          const server = await startOtlpServer();
          // Stats are kept per minute: from the start of this one.
          const from = Math.floor(Date.now() / 60_000) * 60_000;
          const exporter = new Exporter({ url: `${server.url}/v1/metrics`, temporalityPreference: TEMPORALITIES[temporality] });
          const results = await replayPoints(exporter, points, 2);
          // At least one export per resource and window with data (7); a cumulative exporter also sends the repeats.
          expect(results.length, encoding).toBeGreaterThanOrEqual(7);
          for (const result of results) expect(result, encoding).toEqual({ code: 0 });

          const all = await reported(server.url, from);
          expect(all.tokens, encoding).toEqual({ '': total(BY_MODEL) });
          expect((await reported(server.url, from, 'model')).tokens, encoding).toEqual(BY_MODEL);
          // Counters are not calls.
          expect(all.turns, encoding).toBe(0);
          expect(await sessionsOf(server.url), encoding).toEqual([]);
          expect(await metric(server.url, 'cachebreak_events_total', {}), encoding).toBe(0);
          // Gemini CLI's gen_ai.client.token.usage repeats its own counter: left out, and said so.
          expect(await metric(server.url, 'cachebreak_otlp_records_ignored_total', { signal: 'metrics', reason: 'covered_by_harness_metric' }), encoding).toBeGreaterThan(0);
        }),
      );
    },
  );
});
