// GET /: the overview — cache rate over time, breaks by reason over time
// (expected misses, such as a compaction, marked apart),
// what the breaks cost by reason (most first, each reason linking to its
// breaks; the priced sum, unpriced breaks counted apart) and the latest
// breaks, each linking to its session and its break page.
import type { Hono } from 'hono';
import type { AppEnv, ReadDeps } from '../../app.js';
import type { BreakRecord } from '../../core/types.js';
import type { Agreement } from '../../core/verdicts.js';
import { agreementOf } from '../../store/harness-breaks.js';
import type { StatsRow, TotalsRow } from '../../store/store.js';
import { cost, count, html, Html, nameList, percent, unbroken, when, wrappable } from './html.js';
import { layout, type Chart } from './layout.js';
import { intervalFor, linkTo, uiRangeOf, type UiRange } from './range.js';

const DAY = 86_400_000;
const LATEST = 20;
export const REASON_COLORS = ['#c4314b', '#e07b39', '#d4a72c', '#1a7f37', '#2f81f7', '#8250df', '#bf3989', '#57606a', '#0e8a7e', '#953800', '#6e7781'];

/** Cost of rows that sum breaks: null is an unknown price, never $0. */
const costOf = (r: { estimatedExtraCostUsd: number | null; unpricedBreaks: number }) => cost(r.estimatedExtraCostUsd, r.unpricedBreaks);

function cards(t: TotalsRow | undefined): Html {
  const text = t ? costOf(t) : cost(0);
  const space = text.indexOf(' ');
  const costValue = space < 0 ? html`${text}` : html`${text.slice(0, space)} <small>${text.slice(space + 1)}</small>`;
  const items: [Html | string, string][] = [
    [percent(t?.cacheRate ?? null), 'cache rate (writes counted)'],
    [count(t?.turns ?? 0), 'turns'],
    [count(t?.breaks ?? 0), 'cache breaks'],
    [count(t?.missedCacheReadTokens ?? 0), 'missed cache-read tokens'],
    [costValue, 'estimated extra cost'],
  ];
  return html`<section class="numbers">${items.map(([value, label]) => html`<div class="number"><span class="value">${value}</span><span class="label">${label}</span></div>`)}</section>`;
}

function charts(rates: StatsRow[], byReason: StatsRow[], byState: StatsRow[], from: number, to: number, intervalMs: number): Chart[] {
  // Every bucket of the range, empty ones too: a gap in the data is a gap in the line.
  const x: number[] = [];
  for (let ts = Math.floor(from / intervalMs) * intervalMs; ts < to; ts += intervalMs) x.push(ts);
  const at = new Map(x.map((ts, i) => [ts, i]));
  const reasons = [...new Set(byReason.map((r) => r.group ?? ''))].filter((g) => g !== '').sort();
  const breaks = reasons.map((reason, i) => ({ label: reason, color: REASON_COLORS[i % REASON_COLORS.length]!, values: x.map(() => 0 as number | null) }));
  for (const row of byReason) {
    const series = breaks[reasons.indexOf(row.group ?? '')];
    const i = at.get(row.ts);
    if (series && i !== undefined) series.values[i] = row.breaks;
  }
  const rate = x.map(() => null as number | null);
  for (const row of rates) {
    const i = at.get(row.ts);
    if (i !== undefined) rate[i] = row.cacheRate;
  }
  const seconds = x.map((ts) => ts / 1000);
  const step = intervalMs / 1000;
  return [
    { id: 'cache-rate', kind: 'line', xTime: true, format: 'percent', x: seconds, step, series: [{ label: 'cache rate', color: '#2f81f7', values: rate }] },
    {
      id: 'breaks-by-reason',
      kind: 'bars',
      stacked: true,
      xTime: true,
      format: 'count',
      x: seconds,
      step,
      series: breaks,
      // Buckets with expected misses (a compaction): marked apart, never counted as breaks.
      expected: byState.filter((row) => row.group === 'expected' && row.turns > 0 && at.has(row.ts)).map((row) => row.ts / 1000),
    },
  ];
}

/** The reasons by what their breaks cost, most first (an unknown price last), each linking to its breaks. */
function reasonTable(rows: TotalsRow[], range: UiRange): Html {
  const breaks = rows
    .filter((r) => r.breaks > 0 && r.group)
    .sort((a, b) => (b.estimatedExtraCostUsd ?? -1) - (a.estimatedExtraCostUsd ?? -1) || b.breaks - a.breaks);
  if (breaks.length === 0) return html`<p class="muted">No breaks in this range.</p>`;
  return html`<div class="scroll"><table id="reasons"><thead><tr><th>reason</th><th class="n">breaks</th><th class="n">missed tokens</th><th class="n">extra cost ▾</th></tr></thead><tbody>${breaks.map(
    (r) =>
      html`<tr><td class="reason"><a href="${linkTo('/breaks', range, { reason: r.group!, order: 'extra_cost' })}">${wrappable(r.group!)}</a></td><td class="n">${count(r.breaks)}</td><td class="n">${count(r.missedCacheReadTokens)}</td><td class="n">${costOf(r)}</td></tr>`,
  )}</tbody></table></div>`;
}

/** How many misses the range expected (a compaction, a reset the harness announced): marked on the chart, no break. */
function expectedLine(expected: number): Html | string {
  if (expected === 0) return '';
  return html`<p class="muted" id="expected">${count(expected)} expected miss${expected === 1 ? '' : 'es'} (a compaction, a reset the harness announced), dashed on the chart: not breaks, in no figure of breaks or cost.</p>`;
}

/**
 * "the harness agreed on 4 of 5 (80.0 %)", per side that gave verdicts, the
 * breaks the provider said nothing on (ours alone, not a disagreement), and
 * per cachebreak verdict; each break's own on its break page.
 */
function agreementLine(agreement: Agreement): Html | string {
  const sides = (['harness', 'provider'] as const).filter((side) => agreement[side].compared > 0);
  if (sides.length === 0) return '';
  const parts = sides.map((side) => `the ${side} agreed on ${count(agreement[side].agreed)} of ${count(agreement[side].compared)} (${percent(agreement[side].rate)})`);
  if (agreement.provider.compared > 0 && agreement.provider.alone > 0) parts.push(`the provider said nothing on ${count(agreement.provider.alone)} (ours alone)`);
  const rate = (side: { compared: number; agreed: number }) => (side.compared === 0 ? '–' : `${count(side.agreed)} of ${count(side.compared)}`);
  const rows = agreement.reasons.map(
    (r) => html`<tr><td>${wrappable(r.cachebreak)}</td><td class="num">${count(r.breaks)}</td><td class="num">${rate(r.harness)}</td><td class="num">${rate(r.provider)}</td><td class="num">${count(r.provider.alone)}</td></tr>`,
  );
  return html`<p class="muted" id="agreement">Other verdicts on these breaks: ${parts.join('; ')}.</p>
<div class="scroll"><table id="agreement-reasons"><thead><tr><th>cachebreak</th><th>breaks</th><th>harness agreed</th><th>provider agreed</th><th>provider silent</th></tr></thead><tbody>${rows}</tbody></table></div>`;
}

function latestBreaks(breaks: BreakRecord[], range: UiRange): Html {
  if (breaks.length === 0) return html`<p class="muted">No breaks in this range.</p>`;
  return html`<div class="scroll"><table id="latest-breaks" class="cards"><thead><tr><th>time</th><th>session</th><th>agent</th><th>reason</th><th>changed tools</th><th class="n">missed tokens</th><th class="n">extra cost</th></tr></thead><tbody>${breaks.map(
    (b) =>
      html`<tr><td><a href="${linkTo(`/breaks/${encodeURIComponent(b.requestId)}`, range)}">${when(b.ts)}</a></td><td><a href="${linkTo(`/sessions/${encodeURIComponent(b.sessionId)}`, range)}"><code>${wrappable(b.sessionId)}</code></a></td><td>${unbroken(b.agentId)}</td><td class="reason">${wrappable(b.reason)}</td><td data-label="changed tools">${b.changedToolNames.length === 0 ? '' : html`<code>${nameList(b.changedToolNames)}</code>`}</td><td class="n" data-label="missed tokens">${count(b.missedCacheReadTokens)}</td><td class="n" data-label="extra cost">${cost(b.estimatedExtraCostUsd)}</td></tr>`,
  )}</tbody></table></div>`;
}

export function registerOverview(app: Hono<AppEnv>, deps: ReadDeps): void {
  app.get('/', async (c) => {
    const project = c.var.project;
    const range = uiRangeOf(c, deps.now());
    // All time: the charts start at the first day with data.
    const first = range.from ?? (await deps.store.stats(project, { to: range.to, intervalMs: DAY, filters: {} }))[0]?.ts ?? range.to - DAY;
    const intervalMs = intervalFor(range.to - first);
    const bounds = { from: range.from, to: range.to };
    const [[totals], byReasonTotals, byStateTotals, rates, byReason, byState, latest, agreement, [waiting]] = await Promise.all([
      deps.store.totals(project, { ...bounds, filters: {} }),
      deps.store.totals(project, { ...bounds, filters: {}, groupBy: 'reason' }),
      deps.store.totals(project, { ...bounds, filters: {}, groupBy: 'state' }),
      deps.store.stats(project, { from: first, to: range.to, intervalMs, filters: {} }),
      deps.store.stats(project, { from: first, to: range.to, intervalMs, filters: {}, groupBy: 'reason' }),
      deps.store.stats(project, { from: first, to: range.to, intervalMs, filters: {}, groupBy: 'state' }),
      deps.store.breaks(project, bounds, {}, { limit: LATEST }),
      agreementOf(deps.store, project, bounds, {}),
      deps.store.waitingUsage(project),
    ]);
    const waitingCount = waiting?.waiting ?? 0;
    const empty = (totals?.turns ?? 0) === 0;
    const body = html`${cards(totals)}
${waitingCount > 0 ? html`<p class="muted waiting">${count(waitingCount)} usage record${waitingCount === 1 ? ' waits' : 's wait'} for a snapshot or session: in no figure here until joined.</p>` : ''}
${empty ? html`<p id="empty">No turns in the ${range.label}. Choose a longer range above, send events to <code>POST /v1/events</code> (or OTLP), or run <code>cachebreak demo</code> for a day of sample sessions.</p>` : ''}
<h2>Cache rate</h2><div id="cache-rate" class="chart"></div>
<h2>Breaks by reason</h2><div id="breaks-by-reason" class="chart"></div>${expectedLine(byStateTotals.find((r) => r.group === 'expected')?.turns ?? 0)}
<h2>What the breaks cost</h2>${reasonTable(byReasonTotals, range)}
<h2>Latest breaks</h2>${agreementLine(agreement)}${latestBreaks(latest.items, range)}
<p><a id="all-breaks" href="${linkTo('/breaks', range)}">Every break in the ${range.label} →</a></p>`;
    const page = layout({ title: 'Overview', path: '/', section: 'overview', range, project, body, charts: charts(rates, byReason, byState, first, range.to, intervalMs) });
    return c.html(page.text, 200, { 'cache-control': 'no-store' });
  });
}
