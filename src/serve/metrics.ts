// GET /metrics in the Prometheus text format. Counters only, with bounded
// labels (project, model, provider, kind, state, reason, receiver, outcome);
// never session or request ids. Ratios are left to PromQL.
import type { Hono } from 'hono';
import type { AppDeps, AppEnv } from '../app.js';
import type { TotalsRow } from '../store/store.js';
import { COUNTERS } from '../telemetry/counters.js';

interface Family {
  name: string;
  help: string;
  samples: Map<string, { labels: Record<string, string>; value: number }>;
}

function family(name: string, help: string): Family {
  return { name, help, samples: new Map() };
}

function add(f: Family, labels: Record<string, string>, value: number): void {
  const key = JSON.stringify(labels);
  const sample = f.samples.get(key);
  if (sample) sample.value += value;
  else f.samples.set(key, { labels, value });
}

function escape(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
}

function render(families: Family[]): string {
  const lines: string[] = [];
  for (const f of families) {
    lines.push(`# HELP ${f.name} ${f.help}`, `# TYPE ${f.name} counter`);
    for (const { labels, value } of f.samples.values()) {
      const text = Object.entries(labels)
        .map(([k, v]) => `${k}="${escape(v)}"`)
        .join(',');
      lines.push(`${f.name}${text ? `{${text}}` : ''} ${value}`);
    }
  }
  return lines.join('\n') + '\n';
}

export function storeFamilies(rows: readonly TotalsRow[]): Family[] {
  const tokens = family('cachebreak_tokens_total', 'Input and output tokens by kind (uncached_input, cache_read, cache_write, output)');
  const turns = family('cachebreak_turns_total', 'Turns with usage, by cache state');
  const breaks = family('cachebreak_breaks_total', 'Prompt cache breaks, by reason');
  const missed = family('cachebreak_missed_cache_read_tokens_total', 'Cache-read tokens lost to breaks');
  const cost = family('cachebreak_estimated_extra_cost_usd_total', 'Estimated extra cost of breaks in USD (models with a known price)');
  for (const row of rows) {
    const base = { project: row.project, model: row.model, provider: row.provider };
    add(tokens, { ...base, kind: 'uncached_input' }, row.tokens.uncached);
    add(tokens, { ...base, kind: 'cache_read' }, row.tokens.read);
    add(tokens, { ...base, kind: 'cache_write' }, row.tokens.write);
    add(tokens, { ...base, kind: 'output' }, row.tokens.output);
    add(turns, { ...base, state: row.state }, row.turns);
    if (row.reason !== '') {
      add(breaks, { ...base, reason: row.reason }, row.turns);
      add(missed, { ...base, reason: row.reason }, row.missedCacheReadTokens);
      add(cost, { ...base, reason: row.reason }, row.estimatedExtraCostUsd);
    }
  }
  return [tokens, turns, breaks, missed, cost];
}

export function registerMetrics(app: Hono<AppEnv>, deps: AppDeps): void {
  app.get('/metrics', async (c) => {
    const families = storeFamilies(await deps.store.totals());
    for (const [key, declared] of Object.entries(COUNTERS)) {
      const f = family(declared.name, declared.help);
      for (const entry of deps.counters.entries()) if (entry.name === key) add(f, entry.labels, entry.value);
      families.push(f);
    }
    return c.text(render(families), 200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' });
  });
}
