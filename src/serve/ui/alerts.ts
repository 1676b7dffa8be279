// GET /alerts: the project's regression alerts, firing and recently
// resolved, and the rules the server evaluates (serve --alert-…). Rendered by
// the main thread, where the alerts are kept.
import type { Hono } from 'hono';
import type { AppEnv } from '../../app.js';
import type { Alert, Alerts } from '../../alerts/alerts.js';
import { rulesOf } from '../alerts.js';
import { html, type Html, percent, utc, wrappable } from './html.js';
import { layout } from './layout.js';
import { uiRangeOf } from './range.js';

function figure(alert: Alert): string {
  if (alert.rule === 'cache_rate_below') return `${percent(alert.value)} (below ${percent(alert.threshold)})`;
  if (alert.rule === 'extra_cost_above') return `$${alert.value.toFixed(2)}/h (above $${(alert.threshold ?? 0).toFixed(2)}/h)`;
  return `${alert.value} break${alert.value === 1 ? '' : 's'}`;
}

function rulesText(alerts: Alerts | undefined): Html {
  const rules = rulesOf(alerts);
  if (rules === null) return html`<p class="muted" id="no-rules">No alert rule is on. Start the server with <code>--alert-cache-rate-below</code>, <code>--alert-extra-cost-above</code> or <code>--alert-new-reason</code> (docs/alerts.md).</p>`;
  const parts = [
    rules.cacheRateBelow === null ? '' : `cache rate below ${percent(rules.cacheRateBelow)} (once ${rules.minTurns} turns)`,
    rules.extraCostAbove === null ? '' : `extra cost above $${rules.extraCostAbove.toFixed(2)} per hour`,
    rules.newBreakReason ? 'a break reason new to the project' : '',
  ].filter((part) => part !== '');
  return html`<p class="muted" id="rules">Rules, per project, over the last ${rules.window}: ${parts.join('; ')}.</p>`;
}

export function registerAlertsPage(app: Hono<AppEnv>, alerts: Alerts | undefined): void {
  app.get('/alerts', (c) => {
    const range = uiRangeOf(c, Date.now());
    const listed = alerts?.list(c.var.project) ?? [];
    const rows = listed.map(
      (alert) =>
        html`<tr class="alert-${alert.state}"><td>${alert.state === 'firing' ? html`<strong>firing</strong>` : html`<span class="muted">resolved</span>`}</td><td>${wrappable(alert.rule)}${alert.subject === null ? '' : html`<br>${wrappable(alert.subject)}`}</td><td class="n">${figure(alert)}</td><td>${utc(alert.startedMs)}</td><td>${alert.resolvedMs === null ? '' : utc(alert.resolvedMs)}</td><td>${alert.agentVersion ?? html`<span class="muted">unknown</span>`}</td></tr>`,
    );
    const body = html`<h2>Alerts</h2>
${rulesText(alerts)}
${listed.length === 0 ? html`<p class="muted" id="no-alerts">No alert has fired since the server started.</p>` : html`<div class="scroll"><table id="alerts"><thead><tr><th>state</th><th>rule</th><th class="n">value</th><th>started</th><th>resolved</th><th>agent version</th></tr></thead><tbody>${rows}</tbody></table></div>`}`;
    const view = layout({ title: 'Alerts', path: '/alerts', section: 'alerts', range, project: c.var.project, body });
    return c.html(view.text, 200, { 'cache-control': 'no-store' });
  });
}
