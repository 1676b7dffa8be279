// The frame every view of the web UI shares: navigation, the range picker
// (presets and a custom from/to, both kept in the URL), the charts' data and
// scripts.
import { storedIso } from '../../time.js';
import { html, Html, jsonData } from './html.js';
import { DEFAULT_PRESET, linkTo, PRESETS, type UiRange } from './range.js';
import { STYLE } from './style.js';

/** One chart for the page script (client.ts) to draw. */
export interface Chart {
  id: string;
  kind: 'line' | 'bars';
  stacked?: boolean;
  xTime?: boolean;
  xLabel?: string;
  format?: 'percent' | 'count';
  x: number[];
  /** The distance between two x values (a bucket, a turn): the room left at each end. */
  step: number;
  series: { label: string; color: string; values: (number | null)[] }[];
  /** x values marked by a red line (breaks). */
  marks?: number[];
  /** x values marked by a dashed line (expected misses: a compaction, a reset the harness announced). */
  expected?: number[];
}

/** The views the navigation leads to, in its order: section, path, label. */
export const SECTIONS = [
  ['overview', '/', 'Overview'],
  ['sessions', '/sessions', 'Sessions'],
  ['breaks', '/breaks', 'Breaks'],
  ['causes', '/causes', 'Causes'],
  ['insights', '/insights', 'Insights'],
  ['alerts', '/alerts', 'Alerts'],
] as const;

export interface View {
  title: string;
  /** The path the range picker links to (the view itself). */
  path: string;
  /** Which item of the navigation is current. */
  section: (typeof SECTIONS)[number][0];
  range: UiRange;
  project: string;
  body: Html;
  charts?: Chart[];
  /** Query parameters of the view that the range picker keeps. */
  keep?: Record<string, string>;
}

const iso = (ms: number | undefined) => (ms === undefined ? '' : (storedIso(ms) ?? ''));

function rangePicker(view: View): Html {
  const { range } = view;
  const presets = Object.entries(PRESETS).map(([key, preset]) => {
    const target: UiRange = { ...range, query: key === DEFAULT_PRESET ? '' : `range=${key}` };
    const current = range.preset === key ? html` aria-current="true"` : '';
    return html`<a href="${linkTo(view.path, target, view.keep)}"${current} title="${preset.label}">${key}</a>`;
  });
  const kept = Object.entries(view.keep ?? {}).map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`);
  return html`<div class="range"><span>Range: <strong>${range.label}</strong>${range.preset === DEFAULT_PRESET ? ' (the default)' : ''}</span>${presets}
<form method="get" action="${view.path}">${kept}<input name="from" aria-label="from" placeholder="from (RFC 3339)" value="${iso(range.from)}"><span>to</span><input name="to" aria-label="to" placeholder="to (RFC 3339)" value="${iso(range.to)}"><button>Apply</button></form></div>`;
}

export function layout(view: View): Html {
  const nav = SECTIONS.map(
    ([section, path, label]) => html`<a href="${linkTo(path, view.range)}"${view.section === section ? html` aria-current="page"` : ''}>${label}</a>`,
  );
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,"><title>${view.title} · cachebreak</title><link rel="stylesheet" href="/ui/uplot.css"><style>${new Html(STYLE)}</style></head>
<body>
<header><h1>cachebreak</h1><nav>${nav}</nav><span class="muted">project <strong>${view.project}</strong></span></header>
${rangePicker(view)}
<main>${view.body}</main>
<footer>Every view shows ${view.range.preset === 'all' ? 'all time' : `the ${view.range.label}`}${view.range.preset === null ? '' : ` (choose above; the default is the ${PRESETS[DEFAULT_PRESET]!.label}, as GET /v1/stats)`} · API: <a href="/v1">/v1</a> · Prometheus: <a href="/metrics">/metrics</a> · Grafana dashboards: <code>dashboards/</code></footer>
${view.charts && view.charts.length > 0 ? html`${jsonData('charts', view.charts)}<script src="/ui/uplot.js"></script><script src="/ui/ui.js"></script>` : ''}
</body></html>
`;
}
