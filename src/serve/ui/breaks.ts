// GET /breaks: every break in the range, filtered by reason, cause, model,
// agent, changed tool, session, provider, the fingerprint of the cause and
// whether the harness and the provider agree with cachebreak, newest first or by extra cost, a page at a time; each row links to its
// break page.
import type { Context, Hono } from 'hono';
import type { AppEnv, ReadDeps } from '../../app.js';
import { BREAK_CAUSES, BREAK_REASONS, type BreakRecord } from '../../core/types.js';
import { CachebreakError } from '../../errors.js';
import { AGREEMENTS, anyComputed, breaksWhere, COMPUTED_FILTERS, computedFiltersOf, type ComputedFilters } from '../../store/break-scan.js';
import type { BreakFilters, BreakOrder } from '../../store/store.js';
import { listParam } from '../rest/query.js';
import { cost, count, html, Html, unbroken as name, utc } from './html.js';
import { layout } from './layout.js';
import { linkTo, uiRangeOf, type UiRange } from './range.js';

export const PAGE_SIZE = 20;
const ORDERS: Record<BreakOrder, string> = { recent: 'newest', extra_cost: 'most extra cost' };
const CAUSES = [...BREAK_CAUSES, 'none'];
/** The filters and what each accepts: a fixed list, or any name. */
const FILTERS: Record<keyof BreakFilters, { label: string; values?: readonly string[] }> = {
  reason: { label: 'reason', values: BREAK_REASONS },
  cause: { label: 'cause', values: CAUSES },
  model: { label: 'model' },
  agentId: { label: 'agent' },
  toolName: { label: 'changed tool' },
  sessionId: { label: 'session' },
  provider: { label: 'provider' },
};
/** The form's fields: the store's filters, then those computed when read (store/break-scan.ts). */
const FIELDS: [string, { label: string; values?: readonly string[] }][] = [
  ...Object.entries(FILTERS),
  ['fingerprint', { label: 'fingerprint' }],
  ['harnessAgreement', { label: 'harness', values: AGREEMENTS }],
  ['providerAgreement', { label: 'provider verdict', values: AGREEMENTS }],
];
const RANGE_PARAMS = ['range', 'from', 'to'];
const KNOWN = new Set([...Object.keys(FILTERS), ...COMPUTED_FILTERS, ...RANGE_PARAMS, 'order', 'cursor', 'back']);

function bad(name: string, problem: string, hint: string): CachebreakError {
  return new CachebreakError('bad_request', `${name}: ${problem}`, hint);
}

/** The filters of the query, each value checked against its list where it has one. */
function filtersOf(c: Context): BreakFilters {
  const unknown = Object.keys(c.req.queries()).find((name) => !KNOWN.has(name));
  if (unknown !== undefined) throw bad(unknown.slice(0, 40), 'not a filter of this page', `filter by ${Object.keys(FILTERS).join(', ')}; sort with order`);
  const filters: BreakFilters = {};
  for (const [name, { values: allowed }] of Object.entries(FILTERS) as [keyof BreakFilters, (typeof FILTERS)[keyof BreakFilters]][]) {
    const values = listParam(c, name);
    if (!values) continue;
    const wrong = allowed && values.find((v) => !allowed.includes(v));
    if (wrong) throw bad(name, `expected one of ${allowed!.join(', ')}, got "${wrong.slice(0, 60)}"`, `leave ${name} out for every ${FILTERS[name].label}`);
    filters[name] = values;
  }
  return filters;
}

/** The filters as query parameters, several values comma-separated. */
const paramsOf = (filters: BreakFilters | ComputedFilters): Record<string, string> => Object.fromEntries(Object.entries(filters).map(([name, values]) => [name, (values as string[]).join(',')]));

function filterForm(filters: BreakFilters, computed: ComputedFilters, order: BreakOrder, range: UiRange): Html {
  const hidden = Object.entries(Object.fromEntries(new URLSearchParams(range.query))).map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`);
  const given: Record<string, string[] | undefined> = { ...filters, ...computed };
  const fields = FIELDS.map(([name, { label, values }]) => {
    const current = (given[name] ?? []).join(',');
    const input = values
      ? html`<select name="${name}" aria-label="${label}"><option value="">any</option>${[...values, ...(current !== '' && !values.includes(current) ? [current] : [])].map(
          (v) => html`<option${v === current ? html` selected` : ''}>${v}</option>`,
        )}</select>`
      : html`<input name="${name}" aria-label="${label}" value="${current}" placeholder="any">`;
    return html`<label>${label} ${input}</label>`;
  });
  const sort = html`<label>sort <select name="order" aria-label="sort">${(Object.entries(ORDERS) as [BreakOrder, string][]).map(
    ([key, label]) => html`<option value="${key}"${key === order ? html` selected` : ''}>${label} first</option>`,
  )}</select></label>`;
  return html`<form class="filters" method="get" action="/breaks">${hidden}${fields}${sort}<button>Apply</button> <a href="${linkTo('/breaks', range)}">clear</a></form>`;
}


function rows(breaks: BreakRecord[], range: UiRange): Html {
  return html`<div class="scroll"><table id="breaks" class="cards"><thead><tr><th>time</th><th>session · agent</th><th>model</th><th>reason · cause</th><th>changed tools</th><th class="n">missed tokens</th><th class="n">extra cost</th></tr></thead><tbody>${breaks.map(
    (b) =>
      html`<tr data-request="${b.requestId}"><td><a href="${linkTo(`/breaks/${encodeURIComponent(b.requestId)}`, range)}">${name(utc(b.ts).slice(0, 10))} ${name(utc(b.ts).slice(11))}</a></td><td><a href="${linkTo(`/sessions/${encodeURIComponent(b.sessionId)}`, range)}"><code class="id">${b.sessionId}</code></a><br><span class="muted">${name(b.agentId)}</span></td><td data-label="model">${b.model === null ? html`<span class="muted">unknown</span>` : name(b.model)}</td><td><span class="reason nm">${b.reason}</span>${b.cause ? html`<br><span class="muted nm">${b.cause}</span>` : ''}</td><td data-label="changed tools">${b.changedToolNames.map((tool, i) => html`${i > 0 ? ', ' : ''}${name(tool)}`)}</td><td class="n" data-label="missed tokens">${count(b.missedCacheReadTokens)}</td><td class="n" data-label="extra cost">${cost(b.estimatedExtraCostUsd)}</td></tr>`,
  )}</tbody></table></div>`;
}

export function registerBreakList(app: Hono<AppEnv>, deps: ReadDeps): void {
  app.get('/breaks', async (c) => {
    const range = uiRangeOf(c, deps.now());
    const filters = filtersOf(c);
    const computed = computedFiltersOf((name) => listParam(c, name));
    const order = (c.req.query('order') ?? 'recent') as BreakOrder;
    if (!Object.hasOwn(ORDERS, order)) throw bad('order', `expected one of ${Object.keys(ORDERS).join(', ')}, got "${order.slice(0, 40)}"`, 'e.g. order=extra_cost');
    const cursor = c.req.query('cursor') || undefined;
    // The cursors of the pages before this one, '' for the first: what "previous" goes back to.
    const back = cursor === undefined ? [] : (c.req.query('back') ?? '').split('.');
    const [within, query] = [{ from: range.from, to: range.to }, { limit: PAGE_SIZE, ...(cursor ? { cursor } : {}) }];
    const page =
      anyComputed(computed)
        ? await breaksWhere(deps.store, c.var.project, within, filters, computed, query, order)
        : await deps.store.breaks(c.var.project, within, filters, query, order);
    const keep = { ...paramsOf(filters), ...paramsOf(computed), ...(order === 'recent' ? {} : { order }) };
    const first = back.length * PAGE_SIZE + 1;
    const previous =
      cursor === undefined ? '' : html`<a rel="prev" href="${linkTo('/breaks', range, { ...keep, ...(back.length > 1 ? { cursor: back.at(-1)!, back: back.slice(0, -1).join('.') } : {}) })}">← previous</a>`;
    const next = page.nextCursor === null ? '' : html`<a rel="next" href="${linkTo('/breaks', range, { ...keep, cursor: page.nextCursor, back: [...back, cursor ?? ''].join('.') })}">next →</a>`;
    const pager = html`<nav class="pager" aria-label="pages">${previous}<span class="muted">${page.items.length === 0 ? 'no breaks' : `breaks ${count(first)}–${count(first + page.items.length - 1)}`}</span>${next}</nav>`;
    const body = html`<h2>Breaks, ${ORDERS[order]} first</h2>
${filterForm(filters, computed, order, range)}
${page.items.length === 0 ? html`<p class="muted" id="no-breaks">No breaks match in the ${range.label}.</p>` : rows(page.items, range)}
${pager}`;
    const view = layout({ title: 'Breaks', path: '/breaks', section: 'breaks', range, project: c.var.project, body, keep });
    return c.html(view.text, 200, { 'cache-control': 'no-store' });
  });
}
