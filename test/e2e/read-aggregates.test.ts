// What every aggregate serves, read from a real server (its reader thread) on
// a real database: an unknown price is counted, never summed as $0 (SPEC
// §4.10), and the tokens served beside a cache rate are the ones it was
// computed from, with unreported input apart (SPEC §5).
import { beforeAll, describe, expect, it } from 'vitest';
import { mixedWorkload, PRICED_COST_USD, UNPRICED_MODEL, UNREPORTED_INPUT } from './mixed-workload.js';
import { getJson, postEvents, request, startServer, type ServerProcess } from './server.js';

type Json = Record<string, any>;

const HOUR = 3_600_000;
/** Whole hours, so that every event falls in one hourly bucket of the range. */
const T0 = Math.floor(Date.now() / HOUR) * HOUR - 2 * HOUR;
const RANGE = `from=${T0 - HOUR}&to=${T0 + HOUR}`;
const ISO_RANGE = `from=${new Date(T0 - HOUR).toISOString()}&to=${new Date(T0 + HOUR).toISOString()}`;

let server: ServerProcess;

beforeAll(async () => {
  server = await startServer({ lifetime: 'file' });
  const reply = await postEvents(server.url, mixedWorkload(T0));
  expect(reply.body).toEqual({ accepted: 8, duplicates: 0, rejected: [] });
});

const get = <T = Json>(path: string) => getJson<T>(server.url, path);

/** The cache rate the tokens beside it give; for "no data" (null) they must hold no measured input. */
function expectReproduced(where: string, rate: number | null, tokens: Json) {
  const denominator = tokens.uncached + tokens.read + tokens.write;
  if (rate === null) expect(denominator, where).toBe(0);
  else expect(rate, where).toBe(tokens.read / denominator);
}

describe('aggregate costs: the sum over priced breaks and the count of unpriced ones (SPEC §4.10)', () => {
  it('in /v1/stats, overall and per group: null when every break of a row is unpriced', async () => {
    const [bucket, ...more] = (await get(`/v1/stats?${ISO_RANGE}&interval=1h`)).buckets;
    expect(more).toEqual([]);
    expect(bucket).toMatchObject({ turns: 8, breaks: 3, estimatedExtraCostUsd: PRICED_COST_USD, unpricedBreaks: 2 });

    const byModel = new Map((await get(`/v1/stats?${ISO_RANGE}&interval=1h&groupBy=model`)).buckets.map((r: Json) => [r.group, r]));
    expect(byModel.get(UNPRICED_MODEL)).toMatchObject({ breaks: 2, estimatedExtraCostUsd: null, unpricedBreaks: 2, missedCacheReadTokens: 60_000 });
    expect(byModel.get('claude-sonnet-4-5')).toMatchObject({ breaks: 1, estimatedExtraCostUsd: PRICED_COST_USD, unpricedBreaks: 0 });
    // No break at all: nothing is unknown, the cost is $0.
    expect(byModel.get('anthropic/claude-sonnet-4.5')).toMatchObject({ breaks: 0, estimatedExtraCostUsd: 0, unpricedBreaks: 0 });

    const byReason = new Map((await get(`/v1/stats?${ISO_RANGE}&interval=1h&groupBy=reason`)).buckets.map((r: Json) => [r.group, r]));
    expect(byReason.get('system_changed')).toMatchObject({ breaks: 2, estimatedExtraCostUsd: null, unpricedBreaks: 2 });
    expect(byReason.get('tools_order_changed')).toMatchObject({ breaks: 1, estimatedExtraCostUsd: PRICED_COST_USD, unpricedBreaks: 0 });
  });

  it('in /v1/sessions, whole or by agent, in every order', async () => {
    for (const query of ['', '&agentId=main,proxy']) {
      for (const order of ['recent', 'worst_cache_rate', 'extra_cost']) {
        const { sessions } = await get(`/v1/sessions?${ISO_RANGE}&order=${order}${query}`);
        const byId = new Map(sessions.map((s: Json) => [s.sessionId, s]));
        const where = `order=${order}${query}`;
        expect(byId.get('sess_unpriced'), where).toMatchObject({ breaks: 2, estimatedExtraCostUsd: null, unpricedBreaks: 2 });
        expect(byId.get('sess_priced'), where).toMatchObject({ breaks: 1, estimatedExtraCostUsd: PRICED_COST_USD, unpricedBreaks: 0 });
      }
    }
  });

  it('in the Grafana queries: summary, totals, break causes, breaks over time and sessions', async () => {
    const [summary] = await get<Json[]>(`/grafana/summary?${RANGE}`);
    expect(summary).toMatchObject({ breaks: 3, estimatedExtraCostUsd: PRICED_COST_USD, unpricedBreaks: 2 });

    const totals = new Map((await get<Json[]>(`/grafana/totals?${RANGE}&groupBy=model`)).map((r) => [r.model, r]));
    expect(totals.get(UNPRICED_MODEL)).toMatchObject({ breaks: 2, estimatedExtraCostUsd: null, unpricedBreaks: 2 });
    expect(totals.get('claude-sonnet-4-5')).toMatchObject({ breaks: 1, estimatedExtraCostUsd: PRICED_COST_USD, unpricedBreaks: 0 });

    // From the break rollups, and for one session from the breaks themselves.
    for (const query of ['', '&sessionId=sess_unpriced,sess_priced']) {
      const causes = await get<Json[]>(`/grafana/break-causes?${RANGE}${query}`);
      expect(causes, query).toEqual([
        { reason: 'system_changed', cause: 'none', breaks: 2, missedCacheReadTokens: 60_000, estimatedExtraCostUsd: null, unpricedBreaks: 2 },
        { reason: 'tools_order_changed', cause: 'none', breaks: 1, missedCacheReadTokens: 48_900, estimatedExtraCostUsd: PRICED_COST_USD, unpricedBreaks: 0 },
      ]);
    }

    const overTime = await get<Json[]>(`/grafana/breaks-over-time?${RANGE}&interval=1h&groupBy=model`);
    expect(overTime.map(({ ts: _ts, ...row }) => row).sort((a, b) => a.model.localeCompare(b.model))).toEqual([
      { model: UNPRICED_MODEL, breaks: 2, missedCacheReadTokens: 60_000, estimatedExtraCostUsd: null, unpricedBreaks: 2 },
      { model: 'claude-sonnet-4-5', breaks: 1, missedCacheReadTokens: 48_900, estimatedExtraCostUsd: PRICED_COST_USD, unpricedBreaks: 0 },
    ]);

    const sessions = new Map((await get<Json[]>(`/grafana/sessions?${RANGE}&order=extra_cost`)).map((r) => [r.sessionId, r]));
    expect(sessions.get('sess_unpriced')).toMatchObject({ estimatedExtraCostUsd: null, unpricedBreaks: 2 });
    expect(sessions.get('sess_priced')).toMatchObject({ estimatedExtraCostUsd: PRICED_COST_USD, unpricedBreaks: 0 });
  });

  it('through the simPod datasource, the same columns', async () => {
    const reply = await request(server.url, '/grafana/json/query', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        range: { from: new Date(T0 - HOUR).toISOString(), to: new Date(T0 + HOUR).toISOString() },
        intervalMs: HOUR,
        targets: [{ refId: 'A', target: 'totals', payload: { groupBy: 'reason' } }],
      }),
    });
    expect(reply.status).toBe(200);
    const [table] = reply.body as { columns: { text: string }[]; rows: unknown[][] }[];
    const names = table!.columns.map((c) => c.text);
    expect(names).toEqual(['reason', 'turns', 'breaks', 'cacheRate', 'missedCacheReadTokens', 'estimatedExtraCostUsd', 'unpricedBreaks']);
    const rows = new Map(table!.rows.map((row) => [row[0], Object.fromEntries(names.map((name, i) => [name, row[i]]))]));
    expect(rows.get('system_changed')).toMatchObject({ estimatedExtraCostUsd: null, unpricedBreaks: 2 });
    expect(rows.get('tools_order_changed')).toMatchObject({ estimatedExtraCostUsd: PRICED_COST_USD, unpricedBreaks: 0 });
  });
});

describe('token totals beside a cache rate reproduce it (SPEC §5)', () => {
  it('in /v1/stats: read / (uncached + read + write) of the served tokens is the served rate; unreported input is apart', async () => {
    const [bucket] = (await get(`/v1/stats?${ISO_RANGE}&interval=1h`)).buckets;
    // Reported and unreported turns in the same minute and session.
    expect(bucket.unreportedInputTokens).toBe(UNREPORTED_INPUT);
    expect(bucket.tokens).toEqual({ uncached: 6 * 120, read: 48_900, write: 48_900 + 48_900 + 200 + 3 * 30_000, write1h: 0, output: 6 * 300 + 2 * 40 });
    expectReproduced('overall', bucket.cacheRate, bucket.tokens);
    for (const interval of ['1m', '1h']) {
      for (const groupBy of ['', '&groupBy=model', '&groupBy=provider', '&groupBy=agentId', '&groupBy=reason', '&groupBy=state']) {
        for (const row of (await get(`/v1/stats?${ISO_RANGE}&interval=${interval}${groupBy}`)).buckets) {
          expectReproduced(`interval=${interval}${groupBy} ${row.group ?? ''}`, row.cacheRate, row.tokens);
        }
      }
    }
    // The unreported turns alone: input, but no rate and no measured tokens.
    const byModel = new Map((await get(`/v1/stats?${ISO_RANGE}&interval=1h&groupBy=model`)).buckets.map((r: Json) => [r.group, r]));
    expect(byModel.get('anthropic/claude-sonnet-4.5')).toMatchObject({
      turns: 2,
      cacheRate: null,
      tokens: { uncached: 0, read: 0, write: 0, write1h: 0, output: 80 },
      unreportedInputTokens: UNREPORTED_INPUT,
    });
  });

  it('in /v1/sessions, whole sessions and by agent', async () => {
    const sessions: Json[] = [];
    for (const query of ['', '&agentId=main', '&agentId=proxy', '&agentId=main,proxy']) {
      for (const s of (await get(`/v1/sessions?${ISO_RANGE}${query}`)).sessions) {
        expectReproduced(`${s.sessionId}${query}`, s.cacheRate, s.tokens);
        sessions.push({ ...s, query });
      }
    }
    const whole = sessions.find((s) => s.sessionId === 'sess_priced' && s.query === '')!;
    expect(whole).toMatchObject({ turns: 5, unreportedInputTokens: UNREPORTED_INPUT, tokens: { uncached: 360, read: 48_900, write: 98_000 } });
    expect(whole.cacheRate).toBeGreaterThan(0);
    expect(sessions.find((s) => s.sessionId === 'sess_priced' && s.query === '&agentId=proxy')).toMatchObject({
      turns: 2,
      cacheRate: null,
      unreportedInputTokens: UNREPORTED_INPUT,
    });
  });

  it('in the totals (Grafana summary, totals and sessions)', async () => {
    const summary = (await get<Json[]>(`/grafana/summary?${RANGE}`))[0]!;
    expect(summary.unreportedInputTokens).toBe(UNREPORTED_INPUT);
    expectReproduced('summary', summary.cacheRate, summary);
    const stats = (await get(`/v1/stats?${ISO_RANGE}&interval=1h`)).buckets[0];
    expect([summary.uncached, summary.read, summary.write, summary.cacheRate]).toEqual([stats.tokens.uncached, stats.tokens.read, stats.tokens.write, stats.cacheRate]);
    for (const groupBy of ['model', 'provider', 'agentId']) {
      const rows = await get<Json[]>(`/grafana/totals?${RANGE}&groupBy=${groupBy}`);
      const byGroup = new Map<string, Json>((await get(`/v1/stats?${ISO_RANGE}&interval=1h&groupBy=${groupBy}`)).buckets.map((r: Json) => [r.group, r]));
      for (const row of rows) {
        const bucket = byGroup.get(row[groupBy])!;
        expect(row.cacheRate, `${groupBy}=${row[groupBy]}`).toBe(bucket.cacheRate);
        expectReproduced(`totals ${groupBy}=${row[groupBy]}`, row.cacheRate, bucket.tokens);
      }
    }
    for (const s of await get<Json[]>(`/grafana/sessions?${RANGE}&order=recent`)) expectReproduced(`grafana session ${s.sessionId}`, s.cacheRate, s);
    const tokens = await get<Json[]>(`/grafana/tokens?${RANGE}&interval=1h`);
    const kind = (name: string) => tokens.filter((r) => r.kind === name).reduce((n, r) => n + r.tokens, 0);
    expect([kind('uncached'), kind('read'), kind('write'), kind('unreported_input')]).toEqual([summary.uncached, summary.read, summary.write, UNREPORTED_INPUT]);
  });
});
