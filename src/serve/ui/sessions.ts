// GET /sessions: the sessions active in the range, most recent first or
// ranked by worst cache rate or by extra cost, searchable by session id and
// agent; each row links to its session page.
import type { Hono } from 'hono';
import type { AppEnv, ReadDeps } from '../../app.js';
import { CachebreakError } from '../../errors.js';
import type { SessionOrder, SessionSummary } from '../../store/store.js';
import { cost, count, html, Html, percent, unbroken, when, wrappable } from './html.js';
import { layout } from './layout.js';
import { linkTo, uiRangeOf, type UiRange } from './range.js';

/** The most sessions a search reads; the list shows the first SHOWN that match. */
const SEARCHED = 1000;
const SHOWN = 200;
const ORDERS: Record<SessionOrder, string> = { recent: 'most recent', worst_cache_rate: 'worst cache rate', extra_cost: 'extra cost' };

function table(sessions: SessionSummary[], range: UiRange, keep: Record<string, string>): Html {
  const current = keep.order ?? 'recent';
  // Above the table, not in its head: on a narrow screen the rows are cards without one.
  const sort = html`<nav class="sort" aria-label="sort">Sort: ${(Object.keys(ORDERS) as SessionOrder[]).map(
    (order, i) => html`${i > 0 ? ' · ' : ''}<a href="${linkTo('/sessions', range, { ...keep, order })}"${order === current ? html` aria-current="true"` : ''}>${ORDERS[order]}</a>`,
  )}</nav>`;
  return html`${sort}<div class="scroll"><table id="sessions" class="cards"><thead><tr><th>last seen</th><th>session</th><th>agents</th><th class="n">turns</th><th class="n">breaks</th><th class="n">cache rate</th><th class="n">extra cost</th></tr></thead><tbody>${sessions.map(
    (s) =>
      html`<tr><td>${when(s.lastSeen)}</td><td><a href="${linkTo(`/sessions/${encodeURIComponent(s.sessionId)}`, range)}"><code>${wrappable(s.sessionId)}</code></a></td><td>${s.agentIds.map((agent, i) => html`${i > 0 ? ', ' : ''}${unbroken(agent)}`)}</td><td class="n" data-label="turns">${count(s.turns)}</td><td class="n" data-label="breaks">${count(s.breaks)}</td><td class="n" data-label="cache rate">${percent(s.cacheRate)}</td><td class="n" data-label="extra cost">${s.breaks === 0 ? '' : cost(s.estimatedExtraCostUsd, s.unpricedBreaks)}</td></tr>`,
  )}</tbody></table></div>`;
}

export function registerSessionList(app: Hono<AppEnv>, deps: ReadDeps): void {
  app.get('/sessions', async (c) => {
    const range = uiRangeOf(c, deps.now());
    const order = (c.req.query('order') ?? 'recent') as SessionOrder;
    if (!Object.hasOwn(ORDERS, order)) {
      throw new CachebreakError('bad_request', `order: expected one of ${Object.keys(ORDERS).join(', ')}, got "${order.slice(0, 40)}"`, 'e.g. order=worst_cache_rate');
    }
    const q = (c.req.query('q') ?? '').trim();
    const page = await deps.store.sessions(c.var.project, { from: range.from, to: range.to }, {}, { limit: q === '' ? SHOWN : SEARCHED }, order);
    const needle = q.toLowerCase();
    const found = page.items.filter((s) => needle === '' || s.sessionId.toLowerCase().includes(needle) || s.agentIds.some((a) => a.toLowerCase().includes(needle)));
    const shown = found.slice(0, SHOWN);
    const keep: Record<string, string> = { ...(order === 'recent' ? {} : { order }), ...(q === '' ? {} : { q }) };
    const more = page.nextCursor !== null || found.length > SHOWN;
    const body = html`<h2>Sessions, ${ORDERS[order]} first</h2>
<form class="search" method="get" action="/sessions">${Object.entries({ ...Object.fromEntries(new URLSearchParams(range.query)), ...(order === 'recent' ? {} : { order }) }).map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`)}<input type="search" name="q" value="${q}" placeholder="session id or agent" aria-label="search sessions"><button>Search</button></form>
${shown.length === 0 ? html`<p class="muted" id="no-sessions">No sessions${q === '' ? '' : html` matching “${q}”`} in the ${range.label}.</p>` : table(shown, range, keep)}
${more ? html`<p class="muted">Showing the first ${count(shown.length)}; narrow the range or search to see others.</p>` : ''}`;
    const view = layout({ title: 'Sessions', path: '/sessions', section: 'sessions', range, project: c.var.project, body, keep });
    return c.html(view.text, 200, { 'cache-control': 'no-store' });
  });
}
