import type { Hono } from 'hono';
import type { AppEnv, ReadDeps } from '../../app.js';
import { CachebreakError } from '../../errors.js';
import type { GroupBy } from '../../store/store.js';
import { filtersOf, parseInterval, rangeOf } from './query.js';
import { wireStats } from './wire.js';

const GROUPS: readonly GroupBy[] = ['model', 'provider', 'agentId', 'reason', 'state'];
const DAY = 86_400_000;

export function registerStats(app: Hono<AppEnv>, deps: ReadDeps): void {
  app.get('/v1/stats', async (c) => {
    const now = deps.now();
    const range = rangeOf(c, { from: now - DAY, to: now });
    const intervalMs = parseInterval(c.req.query('interval'), 'interval', 3_600_000);
    const groupBy = c.req.query('groupBy');
    if (groupBy !== undefined && !GROUPS.includes(groupBy as GroupBy)) {
      throw new CachebreakError('bad_request', `groupBy: expected one of ${GROUPS.join(', ')}, got "${groupBy.slice(0, 40)}"`, 'e.g. groupBy=model');
    }
    // sessionId is read only to be refused clearly: stats are kept per minute, not per session.
    const filters = filtersOf(c, ['sessionId', 'agentId', 'model', 'provider', 'reason']);
    const [rows, [waiting]] = await Promise.all([
      deps.store.stats(c.var.project, {
        ...range,
        intervalMs,
        filters,
        ...(groupBy ? { groupBy: groupBy as GroupBy } : {}),
      }),
      deps.store.waitingUsage(c.var.project),
    ]);
    return c.json({
      from: new Date(range.from!).toISOString(),
      to: new Date(range.to!).toISOString(),
      intervalMs,
      groupBy: groupBy ?? null,
      buckets: rows.map(wireStats),
      // SPEC §4.11: usage that has not found its snapshot or session is in no bucket, but counted.
      waitingUsage: waiting?.waiting ?? 0,
    });
  });
}
