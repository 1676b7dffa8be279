// GET /v1/breaks: cachebreak's break records, each with the harness's own
// report of the same request beside it (`harness`, null when none joined),
// of chosen causes with `fingerprint`;
// GET /v1/breaks/agreement: how often the harness and the provider agree;
// GET /v1/breaks/fingerprints: the breaks grouped by cause;
// GET /v1/breaks/:requestId: one break beside the two prefixes it compares.
import type { Hono } from 'hono';
import type { AppEnv, ReadDeps } from '../../app.js';
import { harnessAgrees, harnessVerdicts } from '../../core/verdicts.js';
import type { BreakRecord } from '../../core/types.js';
import { breaksOfCauses, fingerprintsOf } from '../../store/fingerprints.js';
import { agreementOf, harnessReportsOf } from '../../store/harness-breaks.js';
import type { Prefix } from '../../core/types.js';
import { CachebreakError } from '../../errors.js';
import type { ExternalBreak } from '../../store/store.js';
import { filtersOf, listParam, pageOf, rangeOf } from './query.js';
import { wireBreak, wireFingerprint } from './wire.js';

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

/** What a prefix is made of, by names and hashes only (never content): what the break page sets side by side. */
export function wirePrefix(prefix: Prefix | null) {
  if (prefix === null) return null;
  return {
    model: prefix.model,
    tools: prefix.tools?.map((t) => ({ name: t.name, schemaHash: t.schemaHash })) ?? null,
    systemBlockHashes: prefix.systemBlockHashes ?? null,
    markers: prefix.markers ?? null,
    params: prefix.params ?? null,
    ttlMs: prefix.ttlMs ?? null,
    partial: prefix.partial ?? null,
  };
}

export function registerBreaks(app: Hono<AppEnv>, deps: ReadDeps): void {
  app.get('/v1/breaks', async (c) => {
    const fingerprints = listParam(c, 'fingerprint');
    const [range, filters, query] = [rangeOf(c), filtersOf(c), pageOf(c)];
    const page = fingerprints ? await breaksOfCauses(deps.store, c.var.project, range, filters, fingerprints, query) : await deps.store.breaks(c.var.project, range, filters, query);
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
  app.get('/v1/breaks/fingerprints', async (c) => {
    const now = deps.now();
    const found = await fingerprintsOf(deps.store, c.var.project, rangeOf(c, { from: now - 86_400_000, to: now }), filtersOf(c));
    return c.json({ fingerprints: found.rows.map(wireFingerprint), breaks: found.breaks, truncated: found.truncated });
  });
  app.get('/v1/breaks/:requestId', async (c) => {
    const requestId = c.req.param('requestId');
    const found = await deps.store.breakPrefixes(c.var.project, requestId);
    if (!found) throw new CachebreakError('not_found', `no break of request "${requestId.slice(0, 256)}"`, 'list breaks with GET /v1/breaks');
    const reports = await harnessReportsOf(deps.store, c.var.project, [found.break]);
    return c.json({
      break: { ...wireBreak(found.break), harness: harnessOf(found.break, reports.get(found.break.requestId)) },
      baseline: wirePrefix(found.baseline),
      turn: wirePrefix(found.turn),
    });
  });
}
