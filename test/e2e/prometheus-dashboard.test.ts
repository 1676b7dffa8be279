// The Prometheus dashboard against a real Prometheus (Debian's `prometheus`,
// which .ci/run installs): it scrapes a real cachebreak server every second
// while sessions are ingested, and every PromQL expression of the dashboard
// (panels and annotations), with Grafana's macros and variables filled in,
// must return numbers.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SERVICE_DETECTION } from '../../src/prices/index.js';
import { SqliteStore } from '../../src/store/sqlite/store.js';
import { cli } from '../cli/run.js';
import { tempDir } from '../helpers.js';
import { seedSession, SEED_STEPS } from './events.js';
import { query, scrapeConfig, sleep, startPrometheus, until, type Json } from './prometheus.js';
import { postEvents, startServer } from './server.js';

const dashboard = JSON.parse(readFileSync(new URL('../../dashboards/cachebreak-prometheus.json', import.meta.url), 'utf8')) as Json;

/** Every PromQL expression in the dashboard, with where it is. */
function expressions(): { where: string; expr: string }[] {
  const out: { where: string; expr: string }[] = [];
  for (const panel of dashboard.panels) for (const t of panel.targets ?? []) out.push({ where: `panel "${panel.title}"`, expr: t.expr });
  for (const a of dashboard.annotations.list) if (a.target?.expr) out.push({ where: `annotation "${a.name}"`, expr: a.target.expr });
  return out;
}

/** As Grafana sends it: the interval macros as a duration, every variable at "All" (its allValue, .*). */
function interpolate(expr: string): string {
  const variables = new Map<string, string>(dashboard.templating.list.map((v: Json) => [v.name, v.allValue]));
  return expr.replace(/\$(__rate_interval|__interval|__range)\b/g, '1m').replace(/\$(\w+)/g, (match, name: string) => {
    const value = variables.get(name);
    if (value === undefined) throw new Error(`${match} is not a variable of the dashboard`);
    return value;
  });
}

/** Every expression returns at least one series, each a finite number (or NaN where `nanAllowed`). */
async function expectNumbers(prometheus: string, all: readonly { where: string; expr: string }[], nanAllowed = (_expr: string) => false): Promise<void> {
  for (const { where, expr } of all) {
    const promql = interpolate(expr);
    const reply = await query(prometheus, promql);
    expect(reply.status, `${where}: ${promql} → ${JSON.stringify(reply).slice(0, 300)}`).toBe('success');
    expect(reply.data.resultType, where).toBe('vector');
    expect(reply.data.result.length, `${where}: ${promql} returned no series`).toBeGreaterThan(0);
    for (const sample of reply.data.result) {
      const value = Number(sample.value[1]);
      expect(Number.isFinite(value) || (Number.isNaN(value) && nanAllowed(expr)), `${where}: ${promql} → ${JSON.stringify(sample)}`).toBe(true);
    }
  }
}

describe('the Prometheus dashboard against a real Prometheus', () => {
  it('every PromQL expression returns numbers while sessions are ingested', { timeout: 90_000 }, async () => {
    const server = await startServer();
    const prometheus = await startPrometheus(scrapeConfig(new URL(server.url).host));
    await until('cachebreak scraped', 20_000, async () => {
      const result = (await query(prometheus, 'up{job="cachebreak"} == 1')).data?.result;
      return result?.length === 1 ? true : undefined;
    });

    // A session with a break each second for a while, so that counters grow
    // between scrapes and rates over 1m have something to divide.
    for (let round = 0; round < 8; round++) {
      const sessionId = `sess_${round}`;
      const steps = SEED_STEPS.map((step) => ({ ...step, requestId: `${sessionId}_${step.requestId}` }));
      expect((await postEvents(server.url, seedSession(sessionId, steps))).status).toBe(200);
      await sleep(1000);
    }
    await until('breaks scraped', 20_000, async () => {
      const result = (await query(prometheus, 'increase(cachebreak_breaks_total[1m]) > 0')).data?.result;
      return result?.length > 0 ? true : undefined;
    });

    const all = expressions();
    expect(all.length).toBeGreaterThanOrEqual(10);
    await expectNumbers(prometheus, all);
    // Left as is, the macro is not PromQL: the substitution above is what makes these pass.
    expect((await query(prometheus, 'rate(cachebreak_tokens_total[$__rate_interval])')).status).toBe('error');
  });

  it('after `cachebreak demo`, with nothing sent since, every panel over stored counters has series and Prometheus holds the stored totals', { timeout: 90_000 }, async () => {
    const db = join(tempDir(), 'demo.db');
    expect((await cli(['demo', '--db', db])).code).toBe(0);
    const store = new SqliteStore(db, SERVICE_DETECTION);
    const [totals] = await store.totals('default', { filters: {} });
    await store.close();
    const server = await startServer({ db });
    const prometheus = await startPrometheus(scrapeConfig(new URL(server.url).host));
    await until('stored turns scraped', 20_000, async () => {
      const result = (await query(prometheus, 'sum(cachebreak_turns_total)')).data?.result;
      return result?.length === 1 ? Number(result[0].value[1]) : undefined;
    }).then((scraped) => expect(scraped).toBe(totals!.turns));
    // increase() needs two samples in its window.
    await until('two scrapes', 20_000, async () => {
      const result = (await query(prometheus, 'count_over_time(cachebreak_turns_total[1m]) >= 2')).data?.result;
      return result?.length > 0 ? true : undefined;
    });
    // The variables' values come from the stored counters.
    for (const variable of dashboard.templating.list as Json[]) {
      const [, metric, label] = /^label_values\((\w+), (\w+)\)$/.exec(variable.query.query)!;
      const reply = (await (await fetch(`${prometheus}/api/v1/label/${label}/values?${new URLSearchParams({ 'match[]': metric! })}`)).json()) as Json;
      expect(reply.data.length, variable.name).toBeGreaterThan(0);
    }
    // Events count what this process received (nothing yet), and the
    // annotations mark breaks in the window (none): only those may be empty.
    const panels = expressions().filter(({ where }) => where.startsWith('panel '));
    const stored = panels.filter(({ expr }) => !/cachebreak_events_total/.test(expr));
    expect(stored.length).toBe(panels.length - 1);
    // Nothing was sent in the window: a ratio of two increases is 0/0.
    await expectNumbers(prometheus, stored, (expr) => expr.includes(') / '));
  });
});
