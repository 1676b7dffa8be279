// Variable values and ad hoc filters for simPod: /variable, /tag-keys, /tag-values.
import type { Hono } from 'hono';
import type { AppEnv, ReadDeps } from '../../../app.js';
import { CachebreakError } from '../../../errors.js';
import { valuesQuery } from '../queries/values.js';
import { jsonBody, payloadOf, rangeBase, type Json } from './body.js';

/** The dimensions an ad hoc filter can narrow: every query that takes one honours it. */
export const TAG_KEYS: readonly string[] = ['model', 'provider', 'agentId', 'reason', 'sessionId'];

async function values(deps: ReadDeps, project: string, body: Json, dimension: string): Promise<string[]> {
  const base: Record<string, string[]> = { ...rangeBase(body), dimension: [dimension] };
  const frame = await valuesQuery.run({ store: deps.store, project, now: deps.now() }, (name) => base[name]);
  return frame.rows.map(([value]) => String(value));
}

/** A variable's query names its dimension: {"target": "model"}, {"dimension": "model"} or just "model". */
function dimensionOf(raw: unknown): string {
  if (typeof raw === 'string' && TAG_KEYS.includes(raw.trim())) return raw.trim();
  const payload = payloadOf(raw);
  const named = payload.target ?? payload.dimension;
  if (typeof named === 'string') return named;
  throw new CachebreakError('bad_request', 'payload: name a dimension', `e.g. {"target": "model"}; one of ${TAG_KEYS.join(', ')}`);
}

export function registerVariables(app: Hono<AppEnv>, deps: ReadDeps): void {
  app.post('/grafana/json/variable', async (c) => {
    const body = await jsonBody(c, deps.queryBodyLimit);
    // simPod sends {"payload": {"target": …}, "range": …}; by hand, {"target": "model"} is enough.
    const list = await values(deps, c.var.project, body, dimensionOf(body.payload ?? body));
    return c.json(list.map((value) => ({ __text: value, __value: value })));
  });

  app.post('/grafana/json/tag-keys', async (c) => {
    await jsonBody(c, deps.queryBodyLimit);
    return c.json(TAG_KEYS.map((text) => ({ type: 'string', text })));
  });

  app.post('/grafana/json/tag-values', async (c) => {
    const body = await jsonBody(c, deps.queryBodyLimit);
    const key = String(body.key);
    if (!TAG_KEYS.includes(key)) {
      throw new CachebreakError('bad_request', `key: expected one of ${TAG_KEYS.join(', ')}, got "${key.slice(0, 40)}"`, 'POST /grafana/json/tag-keys lists them');
    }
    return c.json((await values(deps, c.var.project, body, key)).map((text) => ({ text })));
  });
}
