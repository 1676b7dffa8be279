// /metrics after a restart, an import or `cachebreak demo`: the counters of
// what is stored (turns, tokens, breaks, missed tokens, cost, unpriced
// breaks) start from the database's totals, so they neither drop to 0 nor
// differ from what the REST API and the Infinity dashboards show. The other
// counters count what the running process saw.
import { describe, expect, it } from 'vitest';
import { cli } from '../cli/run.js';
import { freshDb, openStore } from '../store-under-test.js';
import { seedSession } from './events.js';
import { promtoolCheck, samples } from './exposition.js';
import { mixedWorkload } from './mixed-workload.js';
import { postEvents, request, startServer } from './server.js';

const STORED = /^cachebreak_(turns|tokens|breaks|missed_cache_read_tokens|estimated_extra_cost_usd|breaks_unpriced)_total\{/;

async function exposition(url: string): Promise<string> {
  const reply = await request(url, '/metrics');
  expect(reply.status).toBe(200);
  expect(promtoolCheck(reply.text)).toEqual({ status: 0, output: '' });
  return reply.text;
}

function stored(text: string): Map<string, number> {
  return new Map([...samples(text)].filter(([series]) => STORED.test(series)));
}

/** The sum of every sample of a family, optionally of one label value (`kind="output"`). */
function total(text: string, name: string, label = ''): number {
  let sum = 0;
  for (const [series, value] of samples(text)) if (series.startsWith(`${name}{`) && series.includes(label)) sum += value;
  return sum;
}

describe('/metrics counters start from the stored totals', () => {
  it('a restart on the same database shows the same stored counters, which keep growing from there; process counters start again', async () => {
    const first = await startServer();
    expect((await postEvents(first.url, mixedWorkload(Date.now() - 3_600_000))).status).toBe(200);
    const before = await exposition(first.url);
    expect(total(before, 'cachebreak_breaks_total')).toBeGreaterThan(0);
    expect(total(before, 'cachebreak_breaks_unpriced_total')).toBeGreaterThan(0);
    expect(total(before, 'cachebreak_events_total')).toBeGreaterThan(0);
    expect(await first.stop('SIGTERM')).toEqual({ code: 0, signal: null });

    const second = await startServer({ db: first.db });
    const after = await exposition(second.url);
    const was = stored(before);
    const now = stored(after);
    expect([...now.keys()].sort()).toEqual([...was.keys()].sort());
    for (const [series, value] of was) expect(now.get(series), series).toBeCloseTo(value, 9);
    // Events are what this process received: none yet.
    expect(total(after, 'cachebreak_events_total')).toBe(0);

    expect((await postEvents(second.url, seedSession('sess_after'))).body).toMatchObject({ accepted: 8 });
    const grown = await exposition(second.url);
    for (const [series, value] of stored(grown)) expect(value, series).toBeGreaterThanOrEqual(was.get(series) ?? 0);
    expect(total(grown, 'cachebreak_turns_total')).toBe(total(before, 'cachebreak_turns_total') + 4);
  });

  it('after `cachebreak demo`, serve shows the demo totals, within the per-project cap on models', { timeout: 60_000 }, async () => {
    const db = await freshDb('demo');
    expect((await cli(['demo', '--db', db])).code).toBe(0);
    const store = await openStore(db);
    const [totals] = await store.totals('default', { filters: {} });
    const byModel = (await store.totals('default', { filters: {}, groupBy: 'model' })).sort((a, b) => b.turns - a.turns);
    await store.close();
    expect(totals!.turns).toBeGreaterThan(100);
    expect(byModel.length).toBeGreaterThan(2);

    const server = await startServer({ db, args: ['--max-metric-models', '2'] });
    const text = await exposition(server.url);
    expect(total(text, 'cachebreak_turns_total')).toBe(totals!.turns);
    expect(total(text, 'cachebreak_breaks_total')).toBe(totals!.breaks);
    expect(total(text, 'cachebreak_missed_cache_read_tokens_total')).toBe(totals!.missedCacheReadTokens);
    expect(total(text, 'cachebreak_estimated_extra_cost_usd_total')).toBeCloseTo(totals!.estimatedExtraCostUsd ?? 0, 6);
    expect(total(text, 'cachebreak_breaks_unpriced_total')).toBe(totals!.unpricedBreaks);
    expect(total(text, 'cachebreak_tokens_total', 'kind="cache_read"')).toBe(totals!.tokens.read);
    expect(total(text, 'cachebreak_tokens_total', 'kind="cache_write"')).toBe(totals!.tokens.write);
    expect(total(text, 'cachebreak_tokens_total', 'kind="output"')).toBe(totals!.tokens.output);
    expect(total(text, 'cachebreak_tokens_total', 'kind="uncached_input"')).toBe(totals!.tokens.uncached + totals!.unreportedInputTokens);

    // The two most used models by turns keep series of their own; the others are "other".
    const models = new Set([...samples(text).keys()].filter((s) => s.startsWith('cachebreak_turns_total{')).map((s) => /model="([^"]*)"/.exec(s)![1]));
    expect(models).toEqual(new Set([byModel[0]!.group, byModel[1]!.group, 'other']));
  });
});
