// The page itself: headline numbers, breaks by reason, top changed tools and
// the latest breaks, or what to do when there is nothing yet.
import type { Cell } from '../grafana/frame.js';
import { cost, count, html, Html, percent, utc } from './html.js';
import { STYLE } from './style.js';

type Row = Record<string, Cell>;

export interface PageData {
  project: string;
  from: number;
  to: number;
  summary: Row;
  reasons: Row[];
  breaks: Row[];
  tools: Row[];
  /** The agreement query's rows: the harness's and the provider's rate of agreeing with cachebreak. */
  agreement: Row[];
  /** Usage records waiting for their snapshot or session (SPEC §4.11): in no figure yet. */
  waitingUsage: number;
}

const n = (cell: Cell | undefined) => Number(cell ?? 0);
/** A cost cell: null is an unknown price, not $0. */
const usdOrNull = (cell: Cell | undefined) => (cell === null || cell === undefined ? null : Number(cell));
const rowCost = (r: Row) => cost(usdOrNull(r.estimatedExtraCostUsd), n(r.unpricedBreaks));

/** The cost card: the priced sum (or "unknown") large, the unpriced count beside it in small type. */
function costValue(s: Row): Html {
  const text = rowCost(s);
  const space = text.indexOf(' ');
  return space < 0 ? html`${text}` : html`${text.slice(0, space)} <small>${text.slice(space + 1)}</small>`;
}

/** SPEC §4.11: usage that has not found its snapshot or session is counted, not lost. */
function waiting(n: number): string {
  return n === 1
    ? '1 usage record waits for its snapshot or session: in no figure here until it joins.'
    : `${count(n)} usage records wait for their snapshot or session: in no figure here until they join.`;
}

function numbers(s: Row): Html {
  const cards: [string | Html, string][] = [
    [percent(s.cacheRate as number | null), 'cache rate (writes counted)'],
    [count(n(s.turns)), 'turns'],
    [count(n(s.breaks)), 'cache breaks'],
    [count(n(s.missedCacheReadTokens)), 'missed cache-read tokens'],
    [costValue(s), 'estimated extra cost'],
  ];
  return html`<section class="numbers">${cards.map(([value, label]) => html`<div class="number"><span class="value">${value}</span><span class="label">${label}</span></div>`)}</section>`;
}

function reasonTable(reasons: Row[]): Html {
  if (reasons.length === 0) return html`<p class="muted">No breaks.</p>`;
  return html`<table><thead><tr><th>reason</th><th class="n">breaks</th><th class="n">missed tokens</th><th class="n">extra cost</th></tr></thead><tbody>${reasons.map(
    (r) => html`<tr><td class="reason">${r.reason}</td><td class="n">${count(n(r.breaks))}</td><td class="n">${count(n(r.missedCacheReadTokens))}</td><td class="n">${rowCost(r)}</td></tr>`,
  )}</tbody></table>`;
}

function toolTable(tools: Row[]): Html {
  if (tools.length === 0) return html`<p class="muted">No tool changed.</p>`;
  return html`<table><thead><tr><th>tool</th><th class="n">breaks</th></tr></thead><tbody>${tools.map(
    (t) => html`<tr><td><code>${t.tool}</code></td><td class="n">${count(n(t.breaks))}</td></tr>`,
  )}</tbody></table>`;
}

/** The harness's own report of a break, and whether it names cachebreak's reason. */
function harnessCell(b: Row): Html | string {
  if (!b.harnessReason) return '';
  return html`${b.harnessReason}<br><span class="muted">${b.harnessAgrees === 'yes' ? 'agrees' : 'differs'}</span>`;
}

function breakTable(breaks: Row[]): Html {
  if (breaks.length === 0) return html`<p class="muted">No breaks in the last 24 hours.</p>`;
  return html`<table><thead><tr><th>time</th><th>session</th><th>agent</th><th>model</th><th>reason</th><th>harness says</th><th>changed tools</th><th class="n">missed tokens</th><th class="n">extra cost</th></tr></thead><tbody>${breaks.map(
    (b) =>
      html`<tr><td>${utc(n(b.ts))}</td><td><code>${b.sessionId}</code></td><td>${b.agentId}</td><td>${b.model}</td><td><span class="reason">${b.reason}</span>${b.cause ? html`<br><span class="muted">${b.cause}</span>` : ''}</td><td class="wrap">${harnessCell(b)}</td><td class="wrap"><code>${b.changedToolNames}</code></td><td class="n">${count(n(b.missedCacheReadTokens))}</td><td class="n">${cost(usdOrNull(b.estimatedExtraCostUsd))}</td></tr>`,
  )}</tbody></table>`;
}

/** "The harness agreed on 4 of 5 breaks (80%)", per side that gave verdicts. */
function agreementLine(rows: Row[]): Html | string {
  const said = rows.filter((r) => n(r.compared) > 0);
  if (said.length === 0) return '';
  const parts = said.map((r) => `the ${r.source} agreed on ${count(n(r.agreed))} of ${count(n(r.compared))} (${percent(r.rate as number | null)})`);
  return html`<p class="muted">Other verdicts on these breaks: ${parts.join('; ')}.</p>`;
}

export function render(data: PageData): Html {
  const empty = n(data.summary.turns) === 0;
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta http-equiv="refresh" content="60">
<title>cachebreak — prompt cache breaks</title><style>${new Html(STYLE)}</style></head>
<body>
<header><h1>cachebreak</h1><p>Prompt cache breaks in project <strong>${data.project}</strong>, ${utc(data.from)} to ${utc(data.to)}</p></header>
${numbers(data.summary)}
${
  data.waitingUsage > 0
    ? html`<p class="muted waiting">${waiting(data.waitingUsage)}</p>`
    : ''
}
${
  empty
    ? html`<p>No turns in the last 24 hours. Send events to <code>POST /v1/events</code> (or OTLP), or run <code>cachebreak demo</code> for a day of sample sessions.</p>`
    : html`<div class="columns"><section><h2>Why the cache broke</h2>${reasonTable(data.reasons)}</section><section><h2>Tools that changed most</h2>${toolTable(data.tools)}</section></div>
<section><h2>Latest breaks</h2>${agreementLine(data.agreement)}${breakTable(data.breaks)}</section>`
}
<footer>Grafana dashboards: <code>dashboards/</code> (docs/grafana.md) · API: <a href="/v1">/v1</a> · Prometheus: <a href="/metrics">/metrics</a></footer>
</body></html>
`;
}
