// GET /causes: the range's breaks grouped by the fingerprint of their cause
// (core/fingerprint.ts), most costly first: how often, in how many sessions,
// first and last seen, the agent version that first showed it, and what it
// cost; each row leads to the explorer filtered to that cause.
import type { Hono } from 'hono';
import type { AppEnv, ReadDeps } from '../../app.js';
import { fingerprintsOf, MAX_SCANNED, type FingerprintRow } from '../../store/fingerprints.js';
import { cost, count, html, type Html, unbroken, utc } from './html.js';
import { layout } from './layout.js';
import { linkTo, uiRangeOf, type UiRange } from './range.js';

/** The changed part as the cause's earliest break names it: tools, system blocks, parameters, or the model. */
function partOf(row: FingerprintRow): Html {
  const list = (label: string, names: readonly (string | number)[]) => html`${label} ${names.map((n, i) => html`${i > 0 ? ', ' : ''}${unbroken(String(n))}`)}`;
  if (row.changedToolNames.length > 0) return list('tools', row.changedToolNames);
  if (row.changedSystemBlocks !== null && row.changedSystemBlocks.length > 0) return list('system blocks', row.changedSystemBlocks);
  if (row.changedParams.length > 0) return list('parameters', row.changedParams);
  return html`${row.provider === null ? '' : html`${unbroken(row.provider)} `}${row.model === null ? html`<span class="muted">model unknown</span>` : unbroken(row.model)}`;
}

function rows(found: FingerprintRow[], range: UiRange): Html {
  return html`<div class="scroll"><table id="causes" class="cards"><thead><tr><th>cause</th><th>changed part</th><th class="n">breaks</th><th class="n">sessions</th><th>first seen</th><th>last seen</th><th>agent version</th><th class="n">extra cost</th></tr></thead><tbody>${found.map(
    (row) =>
      html`<tr data-fingerprint="${row.fingerprint}"><td><a href="${linkTo('/breaks', range, { fingerprint: row.fingerprint })}"><span class="reason nm">${row.reason}</span></a>${row.cause ? html`<br><span class="muted nm">${row.cause}</span>` : ''}</td><td data-label="changed part">${partOf(row)}</td><td class="n" data-label="breaks">${count(row.breaks)}</td><td class="n" data-label="sessions">${count(row.sessions)}</td><td data-label="first seen">${unbroken(utc(row.firstSeen))}</td><td data-label="last seen">${unbroken(utc(row.lastSeen))}</td><td data-label="agent version">${row.agentVersion === null ? html`<span class="muted">unknown</span>` : unbroken(row.agentVersion)}</td><td class="n" data-label="extra cost">${cost(row.estimatedExtraCostUsd)}</td></tr>`,
  )}</tbody></table></div>`;
}

export function registerCausesPage(app: Hono<AppEnv>, deps: ReadDeps): void {
  app.get('/causes', async (c) => {
    const range = uiRangeOf(c, deps.now());
    const found = await fingerprintsOf(deps.store, c.var.project, { from: range.from, to: range.to }, {});
    const body = html`<h2>Causes</h2>
<p class="muted">The same cause in many sessions is one row: what broke and which part changed, whatever the session or the time (docs/how-it-decides.md#fingerprints). Open a cause for its breaks.${found.truncated ? ` Read from the newest ${count(MAX_SCANNED)} breaks of the range only.` : ''}</p>
${found.rows.length === 0 ? html`<p class="muted" id="no-causes">No breaks in the ${range.label}.</p>` : rows(found.rows, range)}`;
    const view = layout({ title: 'Causes', path: '/causes', section: 'causes', range, project: c.var.project, body });
    return c.html(view.text, 200, { 'cache-control': 'no-store' });
  });
}
