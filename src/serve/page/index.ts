// GET /: a page for people without Grafana — the last 24 hours' cache rate,
// turns, breaks and extra cost, why the cache broke, and the latest breaks
// with their changed tools and what the harness itself reported of them. Server-rendered from the same queries as the
// Grafana endpoints; refreshes itself every minute.
import type { Hono } from 'hono';
import type { AppEnv, ReadDeps } from '../../app.js';
import { toObjects, type Cell } from '../grafana/frame.js';
import { agreementQuery } from '../grafana/queries/agreement.js';
import { breaksQuery } from '../grafana/queries/breaks.js';
import { changedToolsQuery } from '../grafana/queries/changed-tools.js';
import { summaryQuery } from '../grafana/queries/summary.js';
import { totalsQuery } from '../grafana/queries/totals.js';
import type { GrafanaQuery, QueryContext } from '../grafana/query.js';
import { render } from './render.js';

const DAY = 86_400_000;
const LATEST = 50;

export function registerPage(app: Hono<AppEnv>, deps: ReadDeps): void {
  app.get('/', async (c) => {
    const now = deps.now();
    const context: QueryContext = { store: deps.store, project: c.var.project, now };
    const range = { from: String(now - DAY), to: String(now) };
    const rows = async (query: GrafanaQuery, params: Record<string, string> = {}): Promise<Record<string, Cell>[]> => {
      const all: Record<string, string> = { ...range, ...params };
      return toObjects(await query.run(context, (name) => (all[name] === undefined ? undefined : [all[name]])));
    };
    const [summary, reasons, breaks, tools, agreement, [waiting]] = await Promise.all([
      rows(summaryQuery),
      rows(totalsQuery, { groupBy: 'reason' }),
      rows(breaksQuery, { limit: String(LATEST) }),
      rows(changedToolsQuery, { limit: '10' }),
      rows(agreementQuery),
      deps.store.waitingUsage(c.var.project),
    ]);
    const page = render({
      project: c.var.project,
      from: now - DAY,
      to: now,
      summary: summary[0]!,
      reasons,
      breaks,
      tools,
      agreement,
      waitingUsage: waiting?.waiting ?? 0,
    });
    return c.html(page.text, 200, { 'cache-control': 'no-store' });
  });
}
