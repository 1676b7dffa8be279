// GET /v1/breaks: cachebreak's break records, each with the harness's own
// report of the same request beside it (`harness`, null when none joined);
// GET /v1/breaks/agreement: how often the harness and the provider agree.
import type { Hono } from 'hono';
import type { AppEnv, ReadDeps } from '../../app.js';
import { harnessAgrees, harnessVerdicts } from '../../core/verdicts.js';
import type { BreakRecord } from '../../core/types.js';
import { agreementOf, harnessReportsOf } from '../../store/harness-breaks.js';
import type { ExternalBreak } from '../../store/store.js';
import { filtersOf, pageOf, rangeOf } from './query.js';
import { wireBreak } from './wire.js';

/** The harness's report beside a break: its text verbatim, the verdicts it names, and whether one is cachebreak's. */
export function harnessOf(record: BreakRecord, report: ExternalBreak | undefined) {
  if (report === undefined) return null;
  return {
    harness: report.harness,
    reason: report.reason,
    verdicts: harnessVerdicts(report.reason),
    agrees: harnessAgrees(record.reason, report.reason),
    ts: new Date(report.ts).toISOString(),
    sessionId: report.sessionId,
    source: report.source,
    callNumber: report.callNumber,
    file: report.file,
    line: report.line,
  };
}

export function registerBreaks(app: Hono<AppEnv>, deps: ReadDeps): void {
  app.get('/v1/breaks', async (c) => {
    const page = await deps.store.breaks(c.var.project, rangeOf(c), filtersOf(c), pageOf(c));
    const reports = await harnessReportsOf(deps.store, c.var.project, page.items);
    return c.json({
      breaks: page.items.map((b) => ({ ...wireBreak(b), harness: harnessOf(b, reports.get(b.requestId)) })),
      nextCursor: page.nextCursor,
    });
  });
  app.get('/v1/breaks/agreement', async (c) => {
    const now = deps.now();
    return c.json(await agreementOf(deps.store, c.var.project, rangeOf(c, { from: now - 86_400_000, to: now }), filtersOf(c)));
  });
}
