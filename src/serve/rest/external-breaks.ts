// GET /v1/breaks/external: the breaks harnesses reported themselves (Claude
// Code's debug log), their reason text verbatim, to set beside /v1/breaks,
// each with the break of cachebreak's it joined (`joined`, null when none).
import type { Hono } from 'hono';
import type { AppEnv, ReadDeps } from '../../app.js';
import type { BreakRecord } from '../../core/types.js';
import { breaksJoinedTo } from '../../store/harness-breaks.js';
import type { ExternalBreak } from '../../store/store.js';
import { storedIso } from '../../time.js';
import { filtersOf, pageOf, rangeOf } from './query.js';

function wireExternalBreak(record: ExternalBreak, joined: BreakRecord | undefined) {
  return {
    ...record,
    ts: storedIso(record.ts),
    joined: joined === undefined ? null : { sessionId: joined.sessionId, agentId: joined.agentId, requestId: joined.requestId, reason: joined.reason },
  };
}

export function registerExternalBreaks(app: Hono<AppEnv>, deps: ReadDeps): void {
  app.get('/v1/breaks/external', async (c) => {
    const page = await deps.store.externalBreaks(c.var.project, rangeOf(c), filtersOf(c, ['sessionId', 'agentId']), pageOf(c));
    const joined = await breaksJoinedTo(deps.store, c.var.project, page.items);
    return c.json({ breaks: page.items.map((r) => wireExternalBreak(r, joined.get(r))), nextCursor: page.nextCursor });
  });
}
