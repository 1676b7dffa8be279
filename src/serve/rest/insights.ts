// GET /v1/insights/*: what to change, and what it would have saved, across a
// project (docs/insights.md). Each insight is computed by src/insights/ from
// the Store; these routes only parse the query.
import type { Context, Hono } from 'hono';
import type { AppEnv, ReadDeps } from '../../app.js';
import { readAvoidable } from '../../insights/avoidable.js';
import { readTtlAdvice } from '../../insights/ttl.js';
import { readChronicMisses } from '../../insights/chronic.js';
import { readFanOuts } from '../../insights/fanout.js';
import { confusionOf } from '../../store/harness-breaks.js';
import { readVolatileParts } from '../../insights/volatile.js';
import { insightPrices } from '../../insights/prices.js';
import type { TimeRange } from '../../store/store.js';
import { filtersOf, pageOf, rangeOf } from './query.js';

const WEEK_MS = 7 * 86_400_000;
/** The filters an insight takes: not reason, which each insight chooses itself. */
const INSIGHT_FILTERS = ['sessionId', 'agentId', 'model', 'provider'] as const;

/** The range asked for; by default the last 7 days. */
function insightRange(c: Context, now: number): TimeRange {
  return rangeOf(c, { from: now - WEEK_MS, to: now });
}

export function registerInsights(app: Hono<AppEnv>, deps: ReadDeps): void {
  app.get('/v1/insights/avoidable', async (c) => {
    const range = insightRange(c, deps.now());
    return c.json(await readAvoidable(deps.store, c.var.project, range, filtersOf(c, INSIGHT_FILTERS)));
  });
  app.get('/v1/insights/volatile', async (c) => {
    const range = insightRange(c, deps.now());
    const { limit } = pageOf(c, 20, 1000);
    return c.json({ parts: await readVolatileParts(deps.store, c.var.project, range, filtersOf(c, INSIGHT_FILTERS), limit) });
  });
  app.get('/v1/insights/chronic', async (c) => {
    const range = insightRange(c, deps.now());
    const { limit } = pageOf(c, 20, 200);
    return c.json(await readChronicMisses(deps.store, c.var.project, range, filtersOf(c, ['sessionId', 'agentId']), limit));
  });
  app.get('/v1/insights/fanout', async (c) => {
    const range = insightRange(c, deps.now());
    const { limit } = pageOf(c, 20, 1000);
    return c.json(await readFanOuts(deps.store, insightPrices(deps.prices), c.var.project, range, filtersOf(c, ['sessionId', 'agentId']), limit));
  });
  app.get('/v1/insights/agreement', async (c) => {
    const range = insightRange(c, deps.now());
    return c.json(await confusionOf(deps.store, c.var.project, range, filtersOf(c, INSIGHT_FILTERS)));
  });
  app.get('/v1/insights/ttl', async (c) => {
    const range = insightRange(c, deps.now());
    const { limit } = pageOf(c, 20, 1000);
    return c.json(await readTtlAdvice(deps.store, insightPrices(deps.prices), c.var.project, range, filtersOf(c, ['sessionId', 'agentId']), limit));
  });
}
