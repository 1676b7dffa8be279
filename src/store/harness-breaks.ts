// The breaks harnesses reported themselves, set beside cachebreak's own
// (core/verdicts.ts joins and compares them), read through the Store: for a
// page of break records, and for the agreement over a time range. Every read
// is bounded.
import { agreement, breakWindow, confusionTables, joinReports, reportWindow, type Agreement, type ConfusionTables } from '../core/verdicts.js';
import type { BreakRecord } from '../core/types.js';
import { readAll } from './paging.js';
import type { ExternalBreak, Filters, Store, TimeRange } from './store.js';

/** The reports that could join breaks starting in [from, to]. */
function reportsAround(store: Store, project: string, from: number, to: number): Promise<ExternalBreak[]> {
  const range = { from: reportWindow(from).from, to: reportWindow(to).to + 1 };
  return readAll((page) => store.externalBreaks(project, range, {}, page));
}

/** Of the reports' sessions, the ones cachebreak has turns for. */
async function knownSessions(store: Store, project: string, reports: readonly ExternalBreak[]): Promise<Set<string>> {
  const ids = [...new Set(reports.map((r) => r.sessionId))];
  if (ids.length === 0) return new Set();
  const found = await readAll((page) => store.sessions(project, {}, { sessionId: ids }, page));
  return new Set(found.map((s) => s.sessionId));
}

/** The harness report joined to each of these breaks, by request id. */
export async function harnessReportsOf(store: Store, project: string, breaks: readonly BreakRecord[]): Promise<Map<string, ExternalBreak>> {
  if (breaks.length === 0) return new Map();
  const times = breaks.map((b) => b.ts);
  const reports = await reportsAround(store, project, Math.min(...times), Math.max(...times));
  if (reports.length === 0) return new Map();
  return joinReports(breaks, reports, await knownSessions(store, project, reports));
}

/** The break each of these reports joined, when one did: a debug log named after its process lands in the break's session. */
export async function breaksJoinedTo(store: Store, project: string, reports: readonly ExternalBreak[]): Promise<Map<ExternalBreak, BreakRecord>> {
  if (reports.length === 0) return new Map();
  const times = reports.map((r) => r.ts);
  const range = { from: breakWindow(Math.min(...times)).from, to: breakWindow(Math.max(...times)).to + 1 };
  const breaks = await readAll((page) => store.breaks(project, range, {}, page));
  // The join is one-to-one over every report that could take these breaks, not only the ones asked about.
  const around = await reportsAround(store, project, range.from, range.to);
  const joined = joinReports(breaks, around, await knownSessions(store, project, around));
  const byKey = new Map<string, BreakRecord>();
  for (const brk of breaks) {
    const report = joined.get(brk.requestId);
    if (report !== undefined) byKey.set(reportKey(report), brk);
  }
  const found = new Map<ExternalBreak, BreakRecord>();
  for (const report of reports) {
    const brk = byKey.get(reportKey(report));
    if (brk !== undefined) found.set(report, brk);
  }
  return found;
}

/** Reports read twice are equal records, not the same objects. */
function reportKey(r: ExternalBreak): string {
  return JSON.stringify([r.harness, r.sessionId, r.ts, r.reason, r.callNumber, r.file, r.line]);
}

/** How often the harness and the provider agree with cachebreak over the breaks of a range. */
export async function agreementOf(store: Store, project: string, range: TimeRange, filters: Filters): Promise<Agreement> {
  const { breaks, joined, unjoined } = await joinedOf(store, project, range, filters);
  return agreement(breaks, joined, unjoined);
}

/** The confusion tables of cachebreak's verdicts against the harness's and the provider's over the breaks of a range. */
export async function confusionOf(store: Store, project: string, range: TimeRange, filters: Filters): Promise<ConfusionTables> {
  const { breaks, joined } = await joinedOf(store, project, range, filters);
  return confusionTables(breaks, joined);
}

/** The breaks of a range, the harness report joined to each, and how many reports of the range joined none. */
async function joinedOf(store: Store, project: string, range: TimeRange, filters: Filters) {
  const breaks = await readAll((page) => store.breaks(project, range, filters, page));
  // A loop, not Math.min(...): a range may hold more breaks than a call takes arguments.
  let [first, last] = [Infinity, -Infinity];
  for (const b of breaks) [first, last] = [Math.min(first, b.ts), Math.max(last, b.ts)];
  const from = range.from ?? (breaks.length > 0 ? first : Date.now());
  const to = range.to ?? Math.max(last, from);
  const reports = await reportsAround(store, project, from, to);
  const joined = joinReports(breaks, reports, await knownSessions(store, project, reports));
  const used = new Set(joined.values());
  // Reports of the range itself that no break took: the harness saw a break cachebreak did not.
  const inRange = (r: ExternalBreak) => r.ts >= from && (range.to === undefined || r.ts < range.to);
  const scoped = (r: ExternalBreak) => filters.sessionId === undefined || filters.sessionId.includes(r.sessionId);
  const unjoined = reports.filter((r) => !used.has(r) && inRange(r) && scoped(r)).length;
  return { breaks, joined, unjoined };
}
