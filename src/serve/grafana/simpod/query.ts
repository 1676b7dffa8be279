// POST /grafana/json/query: every target of a panel (or an annotation) runs
// its query; series come back as [value, ms] datapoints, tables as columns
// and rows, each tagged with the target's refId.
import type { Hono } from 'hono';
import type { AppEnv, ReadDeps } from '../../../app.js';
import { CachebreakError } from '../../../errors.js';
import { toSimpod } from '../frame.js';
import { QUERY_BY_NAME } from '../queries/index.js';
import { jsonBody, paramSource, payloadOf, rangeBase, type Json } from './body.js';
import { TAG_KEYS } from './variables.js';

interface Target {
  target?: unknown;
  refId?: unknown;
  payload?: unknown;
  hide?: unknown;
}

/**
 * Ad hoc filters arrive beside the targets, never interpolated into them. A
 * key outside /tag-keys is refused rather than ignored, so a panel never
 * shows unfiltered data under a filter.
 */
function adHoc(body: Json): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  const filters = Array.isArray(body.filters) ? (body.filters as { key?: unknown; operator?: unknown; value?: unknown }[]) : [];
  for (const { key, operator, value } of filters) {
    if (typeof key !== 'string' || typeof value !== 'string') continue;
    if (!TAG_KEYS.includes(key)) {
      throw new CachebreakError('bad_request', `filters: no ad hoc filter key "${key.slice(0, 40)}"`, `use one of ${TAG_KEYS.join(', ')} (POST /grafana/json/tag-keys lists them)`);
    }
    if (operator !== '=') {
      throw new CachebreakError('bad_request', `filters: operator "${String(operator)}" on ${key} is not supported`, 'use = (several filters on one key select any of their values)');
    }
    (out[key] ??= []).push(value);
  }
  return out;
}

export function registerQuery(app: Hono<AppEnv>, deps: ReadDeps): void {
  app.post('/grafana/json/query', async (c) => {
    const body = await jsonBody(c, deps.queryBodyLimit);
    const base = { ...rangeBase(body), ...adHoc(body) };
    if (typeof body.intervalMs === 'number') base.interval = [String(body.intervalMs)];
    const targets = Array.isArray(body.targets) ? (body.targets as Target[]) : [];
    const results = [];
    for (const target of targets) {
      if (target.hide === true || target.target === undefined || target.target === '') continue;
      const query = QUERY_BY_NAME.get(String(target.target));
      if (!query) {
        throw new CachebreakError('bad_request', `target: no metric "${String(target.target).slice(0, 60)}"`, 'POST /grafana/json/metrics lists them');
      }
      const frame = await query.run({ store: deps.store, project: c.var.project, now: deps.now(), ...(deps.prices ? { prices: deps.prices } : {}) }, paramSource(payloadOf(target.payload), base));
      const refId = typeof target.refId === 'string' ? target.refId : undefined;
      for (const result of toSimpod(frame)) results.push(refId === undefined ? result : { ...result, refId });
    }
    return c.json(results);
  });
}
