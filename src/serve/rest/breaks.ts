import type { Hono } from 'hono';
import type { AppEnv, ReadDeps } from '../../app.js';
import { filtersOf, pageOf, rangeOf } from './query.js';
import { wireBreak } from './wire.js';

export function registerBreaks(app: Hono<AppEnv>, deps: ReadDeps): void {
  app.get('/v1/breaks', async (c) => {
    const page = await deps.store.breaks(c.var.project, rangeOf(c), filtersOf(c), pageOf(c));
    return c.json({ breaks: page.items.map(wireBreak), nextCursor: page.nextCursor });
  });
}
