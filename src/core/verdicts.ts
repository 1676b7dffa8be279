// Three verdicts on one cache break, in three vocabularies: cachebreak's
// reason, the harness's own report (Claude Code's [PROMPT CACHE BREAK] debug
// line), and the provider's diagnosis (Anthropic's cache_miss_reason or
// OpenAI's prompt_cache_diagnostics reason, read by diagnosis.ts). This
// module is the one place that maps them onto a shared set of verdicts, joins
// a harness report to cachebreak's break of the same request, and measures
// how often the three agree.
import { providerReason } from './diagnosis.js';
import type { BreakReason, BreakRecord } from './types.js';

/**
 * The shared verdicts. cachebreak's reasons map as:
 *   model_changed → model_changed; tools_schema_changed, tools_order_changed
 *   → tools_changed; system_changed → system_changed; cache_control_changed
 *   → cache_control_changed; request_params_changed → request_params_changed;
 *   messages_rewritten → messages_rewritten; breakpoint_lookback_exceeded →
 *   itself (no other vocabulary has it); likely_provider_ttl_or_eviction →
 *   no_change; unknown → unknown.
 * Claude Code's reason texts (2.1.88 and 2.1.332) and cause codes map as
 * HARNESS_PATTERNS lists. Anthropic's cache_miss_reason.type maps as
 * PROVIDER_TYPES lists, OpenAI's prompt_cache_diagnostics reason as
 * OPENAI_REASONS lists; previous_message_not_found, unavailable (and OpenAI's
 * cache_hit, comparison_response_not_found) say nothing of the cause, so
 * they are no verdict.
 */
export const VERDICTS = [
  'model_changed',
  'tools_changed',
  'system_changed',
  'cache_control_changed',
  'request_params_changed',
  'messages_rewritten',
  'breakpoint_lookback_exceeded',
  'no_change',
  'unknown',
] as const;
export type Verdict = (typeof VERDICTS)[number];

const CACHEBREAK: Record<BreakReason, Verdict> = {
  model_changed: 'model_changed',
  tools_schema_changed: 'tools_changed',
  tools_order_changed: 'tools_changed',
  system_changed: 'system_changed',
  cache_control_changed: 'cache_control_changed',
  request_params_changed: 'request_params_changed',
  messages_rewritten: 'messages_rewritten',
  breakpoint_lookback_exceeded: 'breakpoint_lookback_exceeded',
  likely_provider_ttl_or_eviction: 'no_change',
  unknown: 'unknown',
};

/**
 * Claude Code's texts ("model changed (a → b)", "tools changed (+1/-0 tools)",
 * "possible 5min TTL expiry (prompt unchanged)", …, several joined by ", ")
 * and its status-line cause codes (model_changed, ttl_expired_5m, …). Betas,
 * effort, thinking, fast, auto and overage modes, extra body params and
 * microcompact are request settings: request_params_changed. The global cache
 * strategy and cache_control scope or TTL are cache_control_changed.
 */
const HARNESS_PATTERNS: readonly [RegExp, Verdict][] = [
  [/\bmodel[ _]changed\b/, 'model_changed'],
  [/\bsystem[ _]prompt[ _]changed\b/, 'system_changed'],
  [/\btools[ _]changed\b|\bdefer_loading[ _](presence flipped|changed)\b/, 'tools_changed'],
  [/\bcache_control changed\b|\bcache_scope_or_ttl_changed\b|\bglobal cache strategy changed\b/, 'cache_control_changed'],
  [
    /\b(fast[ _]mode|auto[ _]mode|cached microcompact|cache diagnosis) toggled\b|\b(fast_mode|auto_mode|overage|betas|effort|thinking_mode|thinking_display|extra_body)_changed\b|\b(betas|effort|thinking mode|thinking display|overage state|extra body params) changed\b/,
    'request_params_changed',
  ],
  [/\bmessage history mutated\b|\bmessages_rewritten\b/, 'messages_rewritten'],
  [/\bTTL expiry\b|\bttl_expired_(5m|1h)\b|\blikely server-side\b|\blikely_server_side\b/, 'no_change'],
  [/\bunknown cause\b|^unknown$/, 'unknown'],
];

const PROVIDER_TYPES: Readonly<Record<string, Verdict>> = {
  model_changed: 'model_changed',
  system_changed: 'system_changed',
  tools_changed: 'tools_changed',
  messages_changed: 'messages_rewritten',
};

/**
 * OpenAI's reasons (Responses, gpt-5.6+). A changed prompt_cache_key, text
 * format, reasoning effort, verbosity or service tier is a request setting;
 * changed or compacted input is the messages.
 */
const OPENAI_REASONS: Readonly<Record<string, Verdict>> = {
  model_changed: 'model_changed',
  tools_changed: 'tools_changed',
  prompt_cache_key_changed: 'request_params_changed',
  text_format_changed: 'request_params_changed',
  reasoning_effort_changed: 'request_params_changed',
  verbosity_changed: 'request_params_changed',
  service_tier_changed: 'request_params_changed',
  input_changed: 'messages_rewritten',
  context_compacted: 'messages_rewritten',
};

export function cachebreakVerdict(reason: BreakReason): Verdict {
  return CACHEBREAK[reason];
}

/** Every verdict a harness's reason text names, in VERDICTS order; empty when it names none we know. */
export function harnessVerdicts(text: string): Verdict[] {
  const found = new Set(HARNESS_PATTERNS.filter(([pattern]) => pattern.test(text)).map(([, verdict]) => verdict));
  return VERDICTS.filter((verdict) => found.has(verdict));
}

/**
 * Whether a harness report agrees with cachebreak's reason: it names
 * cachebreak's verdict among the changes it saw (cachebreak names the first
 * in prefix order), or names nothing we know when cachebreak says unknown.
 */
export function harnessAgrees(reason: BreakReason, text: string): boolean {
  const theirs = harnessVerdicts(text);
  const ours = cachebreakVerdict(reason);
  return theirs.includes(ours) || (theirs.length === 0 && ours === 'unknown');
}

/**
 * The provider's verdict from its diagnosis as stored (diagnosis.ts
 * providerReason: Anthropic's or OpenAI's); null when it gives none.
 */
export function providerVerdict(diagnosis: unknown): Verdict | null {
  const found = providerReason(diagnosis);
  if (found === null) return null;
  const table = found.provider === 'openai' ? OPENAI_REASONS : PROVIDER_TYPES;
  return Object.hasOwn(table, found.reason) ? table[found.reason]! : null;
}

/** What a harness reported of one break: where, when, and the cache figures it saw. */
export interface HarnessReport {
  sessionId: string;
  ts: number;
  reason: string;
  currentCacheReadTokens: number | null;
  cacheCreationTokens: number | null;
}

/** The harness writes its line after the response: up to this long after the request started. */
export const REPORT_WINDOW_MS = 10 * 60_000;
/** And, clocks being what they are, a little before. */
const REPORT_SLACK_MS = 60_000;

type Joinable = Pick<BreakRecord, 'requestId' | 'sessionId' | 'ts' | 'currentCacheReadTokens' | 'cacheWriteTokens'>;

/** The earliest and latest report time that can join a break starting at `ts`. */
export function reportWindow(ts: number): { from: number; to: number } {
  return { from: ts - REPORT_SLACK_MS, to: ts + REPORT_WINDOW_MS };
}

/** The earliest and latest start of a break that a report written at `ts` can join. */
export function breakWindow(ts: number): { from: number; to: number } {
  return { from: ts - REPORT_WINDOW_MS, to: ts + REPORT_SLACK_MS };
}

/**
 * Joins each harness report to at most one break, and each break to at most
 * one report: the report's cache figures (when it has them) must equal the
 * break's read and write, and its time fall in reportWindow(break start). A
 * report of the break's own session wins, the nearest in time first. A
 * report from a session cachebreak does not know (`knownSessions`: Claude
 * Code names a debug log after its process, not its session, in some runs)
 * may join a break of another session, but only with equal cache figures.
 * Returns the report of each joined break, by request id.
 */
export function joinReports<R extends HarnessReport>(breaks: readonly Joinable[], reports: readonly R[], knownSessions: ReadonlySet<string>): Map<string, R> {
  const sessions = new Set([...knownSessions, ...breaks.map((b) => b.sessionId)]);
  // Candidates by cache figures, or by session for a report without them: no report is tried against every break.
  const byFigures = new Map<string, Joinable[]>();
  const bySession = new Map<string, Joinable[]>();
  const add = (index: Map<string, Joinable[]>, key: string, brk: Joinable) => {
    const list = index.get(key);
    if (list) list.push(brk);
    else index.set(key, [brk]);
  };
  for (const brk of breaks) {
    add(byFigures, `${brk.currentCacheReadTokens}:${brk.cacheWriteTokens}`, brk);
    add(bySession, brk.sessionId, brk);
  }
  const pairs: { report: R; brk: Joinable; rank: number; distance: number }[] = [];
  for (const report of reports) {
    const figures = report.currentCacheReadTokens !== null && report.cacheCreationTokens !== null;
    const candidates = figures ? byFigures.get(`${report.currentCacheReadTokens}:${report.cacheCreationTokens}`) : bySession.get(report.sessionId);
    for (const brk of candidates ?? []) {
      const sameSession = report.sessionId === brk.sessionId;
      if (!sameSession && (sessions.has(report.sessionId) || !figures)) continue;
      const window = reportWindow(brk.ts);
      if (report.ts < window.from || report.ts > window.to) continue;
      if (report.currentCacheReadTokens !== null && report.currentCacheReadTokens !== brk.currentCacheReadTokens) continue;
      if (report.cacheCreationTokens !== null && report.cacheCreationTokens !== brk.cacheWriteTokens) continue;
      pairs.push({ report, brk, rank: sameSession ? 0 : 1, distance: Math.abs(report.ts - brk.ts) });
    }
  }
  pairs.sort((a, b) => a.rank - b.rank || a.distance - b.distance || (a.brk.requestId < b.brk.requestId ? -1 : 1));
  const joined = new Map<string, R>();
  const used = new Set<R>();
  for (const { report, brk } of pairs) {
    if (used.has(report) || joined.has(brk.requestId)) continue;
    used.add(report);
    joined.set(brk.requestId, report);
  }
  return joined;
}

export interface AgreementRate {
  /** Breaks that this side gave a verdict on. */
  compared: number;
  /** Of those, the ones where it names cachebreak's verdict. */
  agreed: number;
  /** agreed / compared; null when nothing was compared. */
  rate: number | null;
}

export interface AgreementRow {
  cachebreak: Verdict;
  /** The harness's verdict (cachebreak's when it names it, else its first); null when it reported nothing for the break. */
  harness: Verdict | null;
  provider: Verdict | null;
  breaks: number;
}

/** One cachebreak verdict's breaks, and how often each side agreed on them. */
export interface ReasonAgreement {
  cachebreak: Verdict;
  breaks: number;
  harness: AgreementRate;
  /** `alone`: breaks the provider gave no verdict on (it diagnoses no TTL, Bedrock, Vertex or routing miss): ours stands alone, not a disagreement. */
  provider: AgreementRate & { alone: number };
}

export interface Agreement {
  breaks: number;
  harness: AgreementRate & { unjoinedReports: number };
  provider: AgreementRate & { alone: number };
  /** Per cachebreak verdict, most breaks first. */
  reasons: ReasonAgreement[];
  rows: AgreementRow[];
}

function rate(compared: number, agreed: number): AgreementRate {
  return { compared, agreed, rate: compared > 0 ? agreed / compared : null };
}

/**
 * The three verdicts on one break: cachebreak's; the harness's (cachebreak's
 * when its report names it, else the first it names, "unknown" when it names
 * nothing we know; null without a report); the provider's (null without one).
 */
export function verdictsOf(
  brk: Pick<BreakRecord, 'reason' | 'providerDiagnosis'>,
  report: Pick<HarnessReport, 'reason'> | undefined,
): { ours: Verdict; harness: Verdict | null; provider: Verdict | null } {
  const ours = cachebreakVerdict(brk.reason);
  const theirs = report === undefined ? undefined : harnessVerdicts(report.reason);
  const harness = theirs === undefined ? null : theirs.includes(ours) ? ours : (theirs[0] ?? 'unknown');
  return { ours, harness, provider: providerVerdict(brk.providerDiagnosis) };
}

/** One cell of a confusion table: cachebreak's verdict against the other side's, with the breaks behind it. */
export interface ConfusionCell {
  cachebreak: Verdict;
  other: Verdict;
  breaks: number;
  /** The other side names cachebreak's verdict (harnessAgrees for the harness). */
  agrees: boolean;
  /** Request ids of the newest breaks of a cell that disagrees, at most CONFUSION_EXAMPLES; none for one that agrees. */
  disagreeing: string[];
}

export interface ConfusionTables {
  /** cachebreak's verdict against the harness's report, over the breaks a report joined. */
  harness: ConfusionCell[];
  /** cachebreak's verdict against the provider's cache_miss_reason, over the breaks it diagnosed. */
  provider: ConfusionCell[];
}

export const CONFUSION_EXAMPLES = 10;

/**
 * Confusion tables: per side, the breaks by (cachebreak's verdict, the
 * side's verdict), breaks it gave no verdict on left out; the cells that
 * disagree name their newest breaks. Most breaks first, then by verdicts.
 */
export function confusionTables(
  breaks: readonly Pick<BreakRecord, 'requestId' | 'ts' | 'reason' | 'providerDiagnosis'>[],
  reports: ReadonlyMap<string, HarnessReport>,
): ConfusionTables {
  const tables = { harness: new Map<string, ConfusionCell>(), provider: new Map<string, ConfusionCell>() };
  const newestFirst = [...breaks].sort((a, b) => b.ts - a.ts || (a.requestId < b.requestId ? -1 : 1));
  for (const brk of newestFirst) {
    const report = reports.get(brk.requestId);
    const { ours, harness, provider } = verdictsOf(brk, report);
    const sides = [
      ['harness', harness, report !== undefined && harnessAgrees(brk.reason, report.reason)],
      ['provider', provider, provider === ours],
    ] as const;
    for (const [side, other, agrees] of sides) {
      if (other === null) continue;
      const key = `${ours}\u0000${other}`;
      let cell = tables[side].get(key);
      if (!cell) tables[side].set(key, (cell = { cachebreak: ours, other, breaks: 0, agrees, disagreeing: [] }));
      cell.breaks++;
      if (!cell.agrees && cell.disagreeing.length < CONFUSION_EXAMPLES) cell.disagreeing.push(brk.requestId);
    }
  }
  const ordered = (cells: Map<string, ConfusionCell>) =>
    [...cells.entries()].sort(([x, a], [y, b]) => b.breaks - a.breaks || (x < y ? -1 : x > y ? 1 : 0)).map(([, cell]) => cell);
  return { harness: ordered(tables.harness), provider: ordered(tables.provider) };
}

/**
 * How often the harness (harnessAgrees) and the provider (its one verdict is
 * cachebreak's, Anthropic's or OpenAI's) agree with cachebreak, overall and
 * per cachebreak verdict. A report that names nothing we know shows as
 * "unknown" in the rows. Reports joined to no break, and breaks the provider
 * said nothing on (ours alone), are counted apart, never as disagreement.
 */
export function agreement(
  breaks: readonly Pick<BreakRecord, 'requestId' | 'reason' | 'providerDiagnosis'>[],
  reports: ReadonlyMap<string, HarnessReport>,
  unjoinedReports: number,
): Agreement {
  const rows = new Map<string, AgreementRow>();
  const counts = new Map<Verdict, { breaks: number; harness: [number, number]; provider: [number, number] }>();
  for (const brk of breaks) {
    const report = reports.get(brk.requestId);
    const { ours, harness, provider } = verdictsOf(brk, report);
    let count = counts.get(ours);
    if (!count) counts.set(ours, (count = { breaks: 0, harness: [0, 0], provider: [0, 0] }));
    count.breaks++;
    if (report !== undefined) {
      count.harness[0]++;
      if (harnessAgrees(brk.reason, report.reason)) count.harness[1]++;
    }
    if (provider !== null) {
      count.provider[0]++;
      if (provider === ours) count.provider[1]++;
    }
    const key = `${ours}\u0000${harness}\u0000${provider}`;
    const row = rows.get(key) ?? { cachebreak: ours, harness, provider, breaks: 0 };
    row.breaks++;
    rows.set(key, row);
  }
  const reasons: ReasonAgreement[] = [...counts.entries()]
    .map(([cachebreak, c]) => ({
      cachebreak,
      breaks: c.breaks,
      harness: rate(...c.harness),
      provider: { ...rate(...c.provider), alone: c.breaks - c.provider[0] },
    }))
    .sort((a, b) => b.breaks - a.breaks || (a.cachebreak < b.cachebreak ? -1 : 1));
  const sum = (side: 'harness' | 'provider', i: 0 | 1) => [...counts.values()].reduce((total, c) => total + c[side][i], 0);
  return {
    breaks: breaks.length,
    harness: { ...rate(sum('harness', 0), sum('harness', 1)), unjoinedReports },
    provider: { ...rate(sum('provider', 0), sum('provider', 1)), alone: breaks.length - sum('provider', 0) },
    reasons,
    // Most breaks first, then by the verdicts (byte order), so equal workloads give equal tables.
    rows: [...rows.entries()].sort(([x, a], [y, b]) => b.breaks - a.breaks || (x < y ? -1 : x > y ? 1 : 0)).map(([, row]) => row),
  };
}
