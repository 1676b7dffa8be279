import type { Hono } from 'hono';
import type { AppEnv, ReadDeps } from '../../app.js';
import { CachebreakError } from '../../errors.js';
import type { SessionOrder } from '../../store/store.js';
import { filtersOf, pageOf, rangeOf } from './query.js';

const ORDERS: readonly SessionOrder[] = ['recent', 'worst_cache_rate', 'extra_cost'];
import { wireSession, wireTurn } from './wire.js';

export function registerSessions(app: Hono<AppEnv>, deps: ReadDeps): void {
  app.get('/v1/sessions', async (c) => {
    const filters = filtersOf(c, ['sessionId', 'agentId']);
    const order = c.req.query('order') ?? 'recent';
    if (!ORDERS.includes(order as SessionOrder)) {
      throw new CachebreakError('bad_request', `order: expected one of ${ORDERS.join(', ')}, got "${order.slice(0, 40)}"`, 'e.g. order=worst_cache_rate');
    }
    const page = await deps.store.sessions(c.var.project, rangeOf(c), filters, pageOf(c), order as SessionOrder);
    return c.json({ sessions: page.items.map(wireSession), nextCursor: page.nextCursor });
  });

  app.get('/v1/sessions/:sessionId/turns', async (c) => {
    const sessionId = c.req.param('sessionId');
    const turns = await deps.store.sessionTurns(c.var.project, sessionId);
    if (!turns) {
      throw new CachebreakError('not_found', `no session "${sessionId.slice(0, 256)}"`, 'list sessions with GET /v1/sessions');
    }
    return c.json({ sessionId, turns: turns.map(wireTurn) });
  });
}
