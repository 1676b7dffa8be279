// What `cachebreak report` shows, read through the Store: one stats bucket
// over the whole range, reason counts, the tools breaks name most, the worst
// sessions, and the harness's own reports beside cachebreak's verdicts. This
// shape is also the --json document.
import { storedIso } from '../time.js';
import { BREAK_REASONS, type BreakReason } from '../core/types.js';
import { harnessAgrees, type Agreement } from '../core/verdicts.js';
import { agreementOf, harnessReportsOf } from '../store/harness-breaks.js';
import type { PriceLookup } from '../core/prices.js';
import { readInsights, type Insights } from '../insights/index.js';
import type { SessionOrder, SessionSummary, StatsRow, Store, TimeRange, TokenTotals } from '../store/store.js';

/** Rows per list (top tools, worst sessions, harness reports). */
const TOP = 5;
/** The newest breaks looked at for harness reports. */
const LATEST = 200;
/** Wider than any epoch minute: every stored minute falls in the one bucket at 0. */
const ONE_BUCKET_MS = 10_000 * 365 * 86_400_000;
const SESSION_PAGE = 1000;

export interface ReportSession {
  sessionId: string;
  agents: number;
  firstSeen: string | null;
  lastSeen: string | null;
  turns: number;
  breaks: number;
  cacheRate: number | null;
  /** Over the breaks with a known price; null when every break is unpriced. */
  estimatedExtraCostUsd: number | null;
  unpricedBreaks: number;
}

export interface Report {
  database: string;
  project: string;
  from: string | null;
  to: string | null;
  sessions: number;
  turns: number;
  breaks: number;
  /** Σread / Σ(uncached + read + write) of `tokens`; null when no turn reported cache usage. */
  cacheRate: number | null;
  missedCacheReadTokens: number;
  /** The sum over breaks with a known price (SPEC §4.10); null when there are breaks and none has one. */
  estimatedExtraCostUsd: number | null;
  /** Breaks of models with no known price: counted, not priced at $0. */
  unpricedBreaks: number;
  /** uncached, read and write of the turns that reported cache usage: the cache rate's own figures (SPEC §5). */
  tokens: TokenTotals;
  /** Input of turns whose usage reported no cache field, outside the cache rate. */
  unreportedInputTokens: number;
  /** Usage records still waiting for the snapshot or session that places them (SPEC §4.11), now. */
  waitingUsage: number;
  /** Every reason, in prefix order; share of all breaks, null when there are none. */
  breaksByReason: { reason: BreakReason; breaks: number; share: number | null }[];
  topChangedTools: { name: string; breaks: number }[];
  worstSessions: { byCacheRate: ReportSession[]; byExtraCost: ReportSession[] };
  /** How often the harness's reports and the provider's diagnoses agree with cachebreak (core/verdicts.ts). */
  agreement: Agreement;
  /** The newest breaks the harness reported too: cachebreak's reason beside the harness's text. */
  harnessReports: { ts: string; sessionId: string; requestId: string; reason: BreakReason; harnessReason: string; agrees: boolean }[];
  /** What to change, and what it would have saved (docs/insights.md). */
  insights: Insights;
}

const NO_TOKENS: TokenTotals = { uncached: 0, read: 0, write: 0, write1h: 0, output: 0 };

function iso(ms: number | undefined): string | null {
  return ms === undefined ? null : storedIso(ms);
}

function session(s: SessionSummary): ReportSession {
  return {
    sessionId: s.sessionId,
    agents: s.agentIds.length,
    firstSeen: iso(s.firstSeen),
    lastSeen: iso(s.lastSeen),
    turns: s.turns,
    breaks: s.breaks,
    cacheRate: s.cacheRate,
    estimatedExtraCostUsd: s.estimatedExtraCostUsd,
    unpricedBreaks: s.unpricedBreaks,
  };
}

/** The Store has no session count; its pages are cheap to walk. */
async function countSessions(store: Store, project: string, range: TimeRange): Promise<number> {
  let total = 0;
  let cursor: string | undefined;
  do {
    const page = await store.sessions(project, range, {}, cursor === undefined ? { limit: SESSION_PAGE } : { limit: SESSION_PAGE, cursor });
    total += page.items.length;
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined);
  return total;
}

/** Sessions without a cache rate, or without a priced extra cost, are not among the worst. */
async function worst(store: Store, project: string, range: TimeRange, order: SessionOrder): Promise<ReportSession[]> {
  const page = await store.sessions(project, range, {}, { limit: TOP }, order);
  const counts = order === 'extra_cost' ? (s: SessionSummary) => (s.estimatedExtraCostUsd ?? 0) > 0 : (s: SessionSummary) => s.cacheRate !== null;
  return page.items.filter(counts).map(session);
}

/** The newest breaks with a harness report joined, cachebreak's reason beside it. */
async function harnessReports(store: Store, project: string, range: TimeRange): Promise<Report['harnessReports']> {
  const latest = (await store.breaks(project, range, {}, { limit: LATEST })).items;
  const reports = await harnessReportsOf(store, project, latest);
  return latest.flatMap((b) => {
    const report = reports.get(b.requestId);
    if (report === undefined) return [];
    const agrees = harnessAgrees(b.reason, report.reason);
    return [{ ts: new Date(b.ts).toISOString(), sessionId: b.sessionId, requestId: b.requestId, reason: b.reason, harnessReason: report.reason, agrees }];
  }).slice(0, TOP);
}

export async function gatherReport(store: Store, prices: PriceLookup, database: string, project: string, range: TimeRange): Promise<Report> {
  const query = { ...range, intervalMs: ONE_BUCKET_MS, filters: {} };
  const [overall, byReason, sessions, tools, byCacheRate, byExtraCost, [waiting], agreement, reported, insights] = await Promise.all([
    store.stats(project, query),
    store.stats(project, { ...query, groupBy: 'reason' }),
    countSessions(store, project, range),
    store.changedTools(project, range, {}, TOP),
    worst(store, project, range, 'worst_cache_rate'),
    worst(store, project, range, 'extra_cost'),
    store.waitingUsage(project),
    agreementOf(store, project, range, {}),
    harnessReports(store, project, range),
    readInsights(store, prices, project, range),
  ]);
  const all: StatsRow | undefined = overall[0];
  const breaks = all?.breaks ?? 0;
  const reasonCounts = new Map(byReason.map((row) => [row.group, row.breaks]));
  return {
    database,
    project,
    from: iso(range.from),
    to: iso(range.to),
    sessions,
    turns: all?.turns ?? 0,
    breaks,
    cacheRate: all?.cacheRate ?? null,
    missedCacheReadTokens: all?.missedCacheReadTokens ?? 0,
    estimatedExtraCostUsd: all ? all.estimatedExtraCostUsd : 0,
    unpricedBreaks: all?.unpricedBreaks ?? 0,
    tokens: all?.tokens ?? NO_TOKENS,
    unreportedInputTokens: all?.unreportedInputTokens ?? 0,
    waitingUsage: waiting?.waiting ?? 0,
    breaksByReason: BREAK_REASONS.map((reason) => {
      const count = reasonCounts.get(reason) ?? 0;
      return { reason, breaks: count, share: breaks > 0 ? count / breaks : null };
    }),
    topChangedTools: tools,
    worstSessions: { byCacheRate, byExtraCost },
    agreement,
    harnessReports: reported,
    insights,
  };
}
