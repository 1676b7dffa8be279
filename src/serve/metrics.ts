// GET /metrics in the Prometheus text format: the counters of
// telemetry/counters.ts, each with its HELP and TYPE, even before it has a sample.
import type { Hono } from 'hono';
import type { AppDeps, AppEnv } from '../app.js';
import { COUNTERS, type CounterName, type Counters } from '../telemetry/counters.js';

function escape(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
}

/** The counters of one project (a key's), or of all when `project` is undefined (no keys configured). */
export function exposition(counters: Counters, project?: string): string {
  const lines: string[] = [];
  const samples = counters.samples().filter((s) => project === undefined || s.labels.project === project);
  for (const [key, { name, help }] of Object.entries(COUNTERS) as [CounterName, { name: string; help: string }][]) {
    lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} counter`);
    for (const sample of samples) {
      if (sample.name !== key) continue;
      const labels = Object.entries(sample.labels)
        .map(([k, v]) => `${k}="${escape(v)}"`)
        .join(',');
      lines.push(`${name}{${labels}} ${sample.value}`);
    }
  }
  return lines.join('\n') + '\n';
}

export function registerMetrics(app: Hono<AppEnv>, deps: AppDeps): void {
  app.get('/metrics', (c) => {
    const project = c.var.keyId === null ? undefined : c.var.project;
    return c.text(exposition(deps.counters, project), 200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' });
  });
}
