// GET /v1/alerts: the caller's project's regression alerts, firing and
// recently resolved, with the rules in force. Answered by the main thread,
// which evaluates them (alerts/alerts.ts), never by a reader thread.
import type { Hono } from 'hono';
import type { AppEnv } from '../app.js';
import { wireAlert, windowText, type Alerts } from '../alerts/alerts.js';
import { CachebreakError } from '../errors.js';
import type { RouteDoc } from './rest/docs.js';

const STATES = ['firing', 'resolved'] as const;

export const ALERT_ROUTE_DOCS: RouteDoc[] = [
  {
    method: 'GET',
    path: '/v1/alerts',
    summary:
      "The project's regression alerts (docs/alerts.md), firing ones first (newest first), then the recently resolved: {rules: {cacheRateBelow, extraCostAbove, newBreakReason, window, minTurns} or null when no rule is on, alerts: [{project, rule, subject, state, startedAt, resolvedAt, value, threshold, windowMs, agentVersion, summary}]}. Kept in this server's memory",
    params: { state: 'firing | resolved (default both)' },
  },
  { method: 'GET', path: '/alerts', summary: "Web UI: the project's regression alerts, firing and recently resolved, and the rules in force" },
];

/** The rules in force, as GET /v1/alerts shows them; null when none is on. */
export function rulesOf(alerts: Alerts | undefined) {
  if (!alerts) return null;
  const { cacheRateBelow, extraCostAbove, newBreakReason, windowMs, minTurns } = alerts.rules;
  return { cacheRateBelow: cacheRateBelow ?? null, extraCostAbove: extraCostAbove ?? null, newBreakReason: newBreakReason === true, window: windowText(windowMs), minTurns };
}

export function registerAlerts(app: Hono<AppEnv>, alerts: Alerts | undefined): void {
  app.get('/v1/alerts', (c) => {
    const state = c.req.query('state');
    if (state !== undefined && !(STATES as readonly string[]).includes(state)) {
      throw new CachebreakError('bad_request', `state: expected one of ${STATES.join(', ')}, got "${state.slice(0, 40)}"`, 'leave state out for both');
    }
    const listed = (alerts?.list(c.var.project) ?? []).filter((alert) => state === undefined || alert.state === state);
    return c.json({ rules: rulesOf(alerts), alerts: listed.map(wireAlert) }, 200, { 'cache-control': 'no-store' });
  });
}
