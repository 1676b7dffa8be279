// GET /metrics in the Prometheus text format: the counters of
// telemetry/counters.ts, each with its HELP and TYPE, even before it has a
// sample, and gauges read from the store when scraped.
import type { Hono } from 'hono';
import type { AppDeps, AppEnv } from '../app.js';
import type { WaitingUsage } from '../store/store.js';
import { COUNTERS, type CounterName, type Counters } from '../telemetry/counters.js';

export const GAUGES = {
  waiting: {
    name: 'cachebreak_usage_waiting',
    help: 'Usage records stored but waiting for the snapshot or session that places them; retention deletes those that never join',
  },
} as const;

function escape(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
}

function labelsOf(labels: Record<string, string>): string {
  return Object.entries(labels)
    .map(([k, v]) => `${k}="${escape(v)}"`)
    .join(',');
}

/**
 * The counters of one project (a key's), or of all when `project` is
 * undefined (no keys configured), and the waiting usage of the same projects.
 */
export function exposition(counters: Counters, project?: string, waiting: readonly WaitingUsage[] = []): string {
  const lines: string[] = [];
  const samples = counters.samples().filter((s) => project === undefined || s.labels.project === project);
  for (const [key, counter] of Object.entries(COUNTERS) as [CounterName, { name: string; help: string; zeroWith?: CounterName }][]) {
    const { name, help } = counter;
    lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} counter`);
    const exposed = new Set<string>();
    for (const sample of samples) {
      if (sample.name !== key) continue;
      const labels = labelsOf(sample.labels);
      exposed.add(labels);
      lines.push(`${name}{${labels}} ${sample.value}`);
    }
    if (counter.zeroWith === undefined) continue;
    for (const sample of samples) {
      const labels = labelsOf(sample.labels);
      if (sample.name !== counter.zeroWith || exposed.has(labels)) continue;
      exposed.add(labels);
      lines.push(`${name}{${labels}} 0`);
    }
  }
  const gauge = GAUGES.waiting;
  lines.push(`# HELP ${gauge.name} ${gauge.help}`, `# TYPE ${gauge.name} gauge`);
  for (const row of waiting) {
    if (project === undefined || row.project === project) lines.push(`${gauge.name}{${labelsOf({ project: row.project })}} ${row.waiting}`);
  }
  return lines.join('\n') + '\n';
}

export function registerMetrics(app: Hono<AppEnv>, deps: AppDeps): void {
  app.get('/metrics', async (c) => {
    const project = c.var.keyId === null ? undefined : c.var.project;
    // A count over an index range: cheap enough to read at every scrape.
    const waiting = await deps.store.waitingUsage(project);
    return c.text(exposition(deps.counters, project, waiting), 200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' });
  });
}
