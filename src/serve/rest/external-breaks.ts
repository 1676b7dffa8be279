// GET /v1/breaks/external: the breaks harnesses reported themselves (Claude
// Code's debug log), their reason text verbatim, to set beside /v1/breaks.
import type { Hono } from 'hono';
import type { AppEnv, ReadDeps } from '../../app.js';
import type { ExternalBreak } from '../../store/store.js';
import { storedIso } from '../../time.js';
import { filtersOf, pageOf, rangeOf } from './query.js';

function wireExternalBreak(record: ExternalBreak) {
  return { ...record, ts: storedIso(record.ts) };
}

export function registerExternalBreaks(app: Hono<AppEnv>, deps: ReadDeps): void {
  app.get('/v1/breaks/external', async (c) => {
    const page = await deps.store.externalBreaks(c.var.project, rangeOf(c), filtersOf(c, ['sessionId', 'agentId']), pageOf(c));
    return c.json({ breaks: page.items.map(wireExternalBreak), nextCursor: page.nextCursor });
  });
}
