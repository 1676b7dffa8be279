// What simPod's query editor offers: each query as a metric, its parameters
// as payload fields (closed lists as selects, dashboard dimensions as
// multi-selects filled from the data), via /metrics and /metric-payload-options.
import type { Hono } from 'hono';
import type { AppEnv, ReadDeps } from '../../../app.js';
import { QUERIES, QUERY_BY_NAME } from '../queries/index.js';
import { valuesQuery } from '../queries/values.js';
import { jsonBody, rangeBase } from './body.js';

/** Set by the request itself (range, $__interval), not by the payload. */
const FROM_REQUEST = new Set(['from', 'to', 'interval']);

function payloads(name: string) {
  const query = QUERY_BY_NAME.get(name)!;
  return Object.entries(query.params)
    .filter(([param]) => !FROM_REQUEST.has(param))
    .map(([param, spec]) => {
      if (spec.choices) {
        return { name: param, label: param, type: 'select', placeholder: spec.doc, options: spec.choices.map((value) => ({ label: value, value })) };
      }
      return { name: param, label: param, type: spec.variable ? 'multi-select' : 'input', placeholder: spec.doc };
    });
}

export function registerMetrics(app: Hono<AppEnv>, deps: ReadDeps): void {
  app.post('/grafana/json/metrics', async (c) => {
    await jsonBody(c, deps.queryBodyLimit);
    return c.json(QUERIES.map((q) => ({ label: q.name, value: q.name, payloads: payloads(q.name) })));
  });

  app.post('/grafana/json/metric-payload-options', async (c) => {
    const body = await jsonBody(c, deps.queryBodyLimit);
    const query = QUERY_BY_NAME.get(String(body.metric));
    const param = String(body.name);
    const spec = query && Object.hasOwn(query.params, param) ? query.params[param] : undefined;
    if (!spec) return c.json([]);
    if (spec.choices) return c.json(spec.choices.map((value) => ({ label: value, value })));
    if (!spec.variable) return c.json([]);
    // The dimension's values in the request's range (the last 24 hours when it sends none).
    const base: Record<string, string[]> = { ...rangeBase(body), dimension: [param] };
    const frame = await valuesQuery.run({ store: deps.store, project: c.var.project, now: deps.now() }, (name) => base[name]);
    return c.json(frame.rows.map(([value]) => ({ label: String(value), value: String(value) })));
  });
}
