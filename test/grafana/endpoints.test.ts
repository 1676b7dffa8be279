// The Infinity endpoints in-process: Grafana's ways of writing times,
// intervals and variables; no data kept apart from 0; a variable a query
// cannot honour refused rather than ignored.
import { describe, expect, it } from 'vitest';
import { BREAK_REASONS } from '../../src/core/types.js';
import { MAX_POINTS, variableValues } from '../../src/serve/grafana/params.js';
import { demoWorkload } from '../../src/cli/demo/workload.js';
import { NOW, storeApp } from '../serve/harness.js';
import { demoApp, DEMO_RANGE } from './demo.js';

const RANGE = `from=${DEMO_RANGE.from}&to=${DEMO_RANGE.to}`;
const HOUR = 3_600_000;

describe('variables as Grafana sends them', () => {
  it.each([
    [['a'], ['a']],
    [['a,b'], ['a', 'b']],
    [['a', 'b'], ['a', 'b']],
    [['{a,b}'], ['a', 'b']],
    [[' {a, b} ', 'a'], ['a', 'b']],
    [['$__all'], undefined],
    [['All'], undefined],
    [['*'], undefined],
    [['a', '*'], undefined],
    [[''], undefined],
    [undefined, undefined],
  ])('%j → %j', (raw, values) => {
    expect(variableValues(raw)).toEqual(values);
  });
});

describe('GET /grafana/* against the demo database', () => {
  it('buckets by whole minutes, rounding Grafana intervals up, in ms or as durations', async () => {
    const { get } = await demoApp();
    const buckets = async (interval: string) => (await get(`/grafana/cache-rate?${RANGE}&interval=${interval}`)).body.length;
    expect(await buckets('1h')).toBe(24);
    expect(await buckets(String(HOUR))).toBe(24);
    expect(await buckets('30s')).toBe(1440);
    expect(await buckets('15000')).toBe(1440);
    expect(await buckets('90s')).toBe(720);
    expect(await buckets('2m')).toBe(720);
    // A month in 1-minute buckets is wider than any screen: wider buckets instead.
    const month = await get(`/grafana/cache-rate?from=${DEMO_RANGE.to - 30 * 24 * HOUR}&to=${DEMO_RANGE.to}&interval=1m`);
    expect(month.body.length).toBeLessThanOrEqual(MAX_POINTS + 1);
    expect(month.body[1].ts - month.body[0].ts).toBe(5 * 60_000);
  });

  it('gives every bucket a cache rate, null where nothing reported cache usage: no data is not 0 %', async () => {
    const { get } = await demoApp();
    const { body } = await get(`/grafana/cache-rate?${RANGE}&interval=1h&groupBy=model`);
    const proxied = body.filter((r: any) => r.model === 'anthropic/claude-sonnet-4.5');
    expect(proxied).toHaveLength(24);
    expect(proxied.every((r: any) => r.cacheRate === null)).toBe(true);
    const sonnet = body.filter((r: any) => r.model === 'claude-sonnet-4-5');
    expect(sonnet.some((r: any) => r.cacheRate === null)).toBe(true);
    expect(sonnet.some((r: any) => r.cacheRate > 0.9)).toBe(true);
    const summary = (await get(`/grafana/summary?${RANGE}&model=anthropic/claude-sonnet-4.5`)).body;
    expect(summary).toEqual([expect.objectContaining({ cacheRate: null, breaks: 0 })]);
    expect(summary[0].turns).toBeGreaterThan(0);
  });

  it('treats every form of "All" as no filter and honours multi-value forms', async () => {
    const { get } = await demoApp();
    const turns = async (query: string) => (await get(`/grafana/summary?${RANGE}&${query}`)).body[0].turns;
    const all = await turns('');
    for (const form of ['model=%24__all', 'model=All', 'model=*', 'model=', 'model=%2A&provider=%7B%7D']) expect(await turns(form), form).toBe(all);
    const sonnet = await turns('model=claude-sonnet-4-5');
    const opus = await turns('model=claude-opus-4-5');
    expect(sonnet).toBeGreaterThan(0);
    for (const form of ['model=claude-sonnet-4-5,claude-opus-4-5', 'model=claude-sonnet-4-5&model=claude-opus-4-5', 'model=%7Bclaude-sonnet-4-5%2Cclaude-opus-4-5%7D']) {
      expect(await turns(form), form).toBe(sonnet + opus);
    }
    expect(await turns('model=no-such-model')).toBe(0);
  });

  it('refuses a variable a query cannot honour, unless it selects everything', async () => {
    const { get } = await demoApp();
    const refused = await get(`/grafana/sessions?${RANGE}&model=claude-sonnet-4-5`);
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toBe('model: this query cannot be filtered by model');
    expect((await get(`/grafana/sessions?${RANGE}&model=*`)).status).toBe(200);
  });

  it('answers tokens in long form, one row per kind and bucket', async () => {
    const { get } = await demoApp();
    const { body } = await get(`/grafana/tokens?${RANGE}&interval=1h`);
    expect(new Set(body.map((r: any) => r.kind))).toEqual(new Set(['uncached', 'read', 'write', 'output', 'unreported_input']));
    const summary = (await get(`/grafana/summary?${RANGE}`)).body[0];
    const sum = (kind: string) => body.filter((r: any) => r.kind === kind).reduce((s: number, r: any) => s + r.tokens, 0);
    expect([sum('uncached'), sum('read'), sum('write'), sum('output'), sum('unreported_input')]).toEqual([
      summary.uncached,
      summary.read,
      summary.write,
      summary.output,
      summary.unreportedInputTokens,
    ]);
    // The demo's proxied model reports no cache field: its input is apart, and the rest reproduces the rate (SPEC §5).
    expect(summary.unreportedInputTokens).toBeGreaterThan(0);
    expect(summary.cacheRate).toBe(summary.read / (summary.uncached + summary.read + summary.write));
  });

  it('lists breaks with their changed tools, and breaks down reasons, causes and tools from the same data', async () => {
    const { get } = await demoApp();
    const breaks = (await get(`/grafana/breaks?${RANGE}&limit=5000`)).body;
    const summary = (await get(`/grafana/summary?${RANGE}`)).body[0];
    expect(breaks).toHaveLength(summary.breaks);
    const reordered = breaks.find((b: any) => b.reason === 'tools_order_changed');
    expect(reordered.changedToolNames).toMatch(/^mcp__\w+(, mcp__\w+)+$/);
    const byReason = (await get(`/grafana/totals?${RANGE}`)).body;
    const causes = (await get(`/grafana/break-causes?${RANGE}`)).body;
    for (const { reason, breaks: count } of byReason) {
      expect(breaks.filter((b: any) => b.reason === reason)).toHaveLength(count);
      expect(causes.filter((c: any) => c.reason === reason).reduce((s: number, c: any) => s + c.breaks, 0)).toBe(count);
    }
    expect(causes).toContainEqual(expect.objectContaining({ reason: 'likely_provider_ttl_or_eviction', cause: 'ttl_expired' }));
    const tools = (await get(`/grafana/changed-tools?${RANGE}&limit=100`)).body;
    for (const { tool, breaks: count } of tools) {
      expect(breaks.filter((b: any) => b.changedToolNames.split(', ').includes(tool))).toHaveLength(count);
    }
  });

  it('ranks sessions and follows one turn by turn, the break at each miss', async () => {
    const { get } = await demoApp();
    const worst = (await get(`/grafana/sessions?${RANGE}&order=worst_cache_rate`)).body;
    const rates = worst.map((s: any) => s.cacheRate).filter((r: number | null) => r !== null);
    expect(rates).toEqual([...rates].sort((a, b) => a - b));
    const costly = (await get(`/grafana/sessions?${RANGE}&order=extra_cost&limit=3`)).body;
    expect(costly).toHaveLength(3);
    expect(costly[0].estimatedExtraCostUsd).toBeGreaterThanOrEqual(costly[1].estimatedExtraCostUsd);
    const { body: turns } = await get(`/grafana/turns?sessionId=${costly[0].sessionId}`);
    expect(turns).toHaveLength(costly[0].turns);
    expect(turns.map((t: any) => t.seq)).toEqual(turns.map((_: unknown, i: number) => i + 1));
    const misses = turns.filter((t: any) => t.state === 'miss');
    expect(misses).toHaveLength(costly[0].breaks);
    expect(misses.every((t: any) => t.reason !== '' && t.missedCacheReadTokens > 0)).toBe(true);
    expect(turns.filter((t: any) => t.state !== 'miss').every((t: any) => t.reason === '' && t.missedCacheReadTokens === null)).toBe(true);
    expect((await get('/grafana/turns?sessionId=no-such-session')).body).toEqual([]);
    const missing = await get('/grafana/turns');
    expect(missing.status).toBe(400);
    expect(missing.body.error.message).toBe('sessionId: expected exactly one session');
  });

  it('lists variable values seen in the range: sessions most recent first, the rest sorted', async () => {
    const { get } = await demoApp();
    const values = async (dimension: string) => (await get(`/grafana/values?${RANGE}&dimension=${dimension}`)).body.map((r: any) => r.value);
    const recent = (await get(`/grafana/sessions?${RANGE}&order=recent&limit=1000`)).body.map((s: any) => s.sessionId);
    expect(await values('sessionId')).toEqual(recent);
    // Every session of the demo falls in its day.
    expect(recent.length).toBe(new Set(demoWorkload({ seed: 1, now: NOW }).flatMap((e) => e.sessionId ?? [])).size);
    expect((await get(`/grafana/values?${RANGE}&dimension=sessionId&limit=3`)).body.map((r: any) => r.value)).toEqual(recent.slice(0, 3));
    const models = await values('model');
    expect(models).toEqual([...models].sort());
    expect(models).toContain('claude-sonnet-4-5');
    // The demo has a break of every reason.
    expect(await values('reason')).toEqual([...BREAK_REASONS].sort());
  });

  it('marks every break as an annotation with its reason in text and tags', async () => {
    const { get } = await demoApp();
    const { body } = await get(`/grafana/annotations?${RANGE}&reason=system_changed`);
    expect(body.length).toBeGreaterThan(0);
    expect(body[0]).toEqual({ ts: expect.any(Number), text: expect.stringMatching(/^system_changed in session /), title: 'Cache break: system_changed', tags: expect.stringMatching(/^cache-break,system_changed,/) });
  });

  it.each([
    ['cache-rate?interval=soon', 'interval: expected a duration such as 30s, 1m, 1h or milliseconds, got "soon"'],
    ['cache-rate?interval=0', 'interval: expected a duration'],
    ['cache-rate?groupBy=session', 'groupBy: expected one of none, model, provider, agentId'],
    ['breaks?limit=0', 'limit: expected a whole number from 1 to 5000'],
    ['summary?from=2026-11-30T12:00:00Z&to=2026-11-30T11:00:00Z', 'from: must be earlier than to'],
    ['summary?from=yesterday', 'from: expected RFC 3339 or epoch milliseconds'],
    ['values?dimension=colour', 'dimension: expected one of model, provider, agentId, reason, sessionId'],
  ])('answers %s with 400 naming the parameter', async (path, message) => {
    const { get } = await storeApp();
    const { status, body } = await get(`/grafana/${path}`);
    expect(status).toBe(400);
    expect(body.error.message).toContain(message);
  });
});
