// What the store's reads answer, built from the sums and rows a backend
// queried: every backend answers through these, so that they agree.
import { byCodePoint } from '../core/hash.js';
import { placements } from '../core/history.js';
import { cacheRate } from '../core/rate.js';
import { TURN_STATES, type BreakCause, type BreakReason, type Turn } from '../core/types.js';
import { storedBreak } from './sqlite/rows.js';
import type { Sums } from './schema.js';
import type {
  BreakCauseRow,
  CostTotals,
  ExternalBreak,
  Filters,
  GroupBy,
  RateTokens,
  SessionSummary,
  StatsQuery,
  StatsRow,
  StoredCounts,
  TotalsRow,
  TurnView,
} from './store.js';

/** The sums a summary is computed from (streams, sessions and rollups keep them). */
export type SummedRow = Pick<Sums, 'turns' | 'breaks' | 'unmeasuredInput' | 'uncached' | 'read' | 'write' | 'write1h' | 'output' | 'missed' | 'extraCostMicroUsd' | 'unpriced'>;

/** An id of a label (model, provider, agent) to its value; undefined for the empty value. */
export type LabelValue = (id: number) => string | undefined;

/**
 * The tokens of measured turns, from which the cache rate is computed (SPEC
 * §5), and apart from them the input of turns that reported no cache field.
 */
function rateTokensOf(s: Pick<Sums, 'uncached' | 'read' | 'write' | 'write1h' | 'output' | 'unmeasuredInput'>): RateTokens {
  return {
    tokens: { uncached: s.uncached, read: s.read, write: s.write, write1h: s.write1h, output: s.output },
    unreportedInputTokens: s.unmeasuredInput,
  };
}

/**
 * SPEC §4.10: the sum over priced breaks and the count of unpriced ones; no
 * figure at all when every break of the row is unpriced.
 */
function costOf(breaks: number, microUsd: number, unpriced: number): CostTotals {
  return {
    estimatedExtraCostUsd: breaks > 0 && unpriced >= breaks ? null : microUsd / 1_000_000,
    unpricedBreaks: unpriced,
  };
}

/** The figures of one row of sums (a totals row without its group). */
export function totalsOf(row: SummedRow): TotalsRow {
  return {
    turns: row.turns,
    breaks: row.breaks,
    cacheRate: cacheRate(row),
    ...rateTokensOf(row),
    missedCacheReadTokens: row.missed,
    ...costOf(row.breaks, row.extraCostMicroUsd, row.unpriced),
  };
}

/** The value of a stats or totals group: a reason as stored, a label by its id ('' when unknown). */
export function groupValue(groupBy: GroupBy, group: number | string, labelValue: LabelValue): string {
  if (groupBy === 'reason') return String(group);
  if (groupBy === 'state') return TURN_STATES[Number(group)] ?? '';
  return labelValue(Number(group)) ?? '';
}

/** Rows by time, then by group value (byte-wise, as stored text orders): the same order whatever ids a store gave labels. */
function byTimeAndGroup(a: { ts?: number; group?: string }, b: { ts?: number; group?: string }): number {
  return (a.ts ?? 0) - (b.ts ?? 0) || byCodePoint(a.group ?? '', b.group ?? '');
}

export function statsRowsOf(rows: readonly (SummedRow & { ts: number; group: number | string | null })[], groupBy: GroupBy | undefined, labelValue: LabelValue): StatsRow[] {
  return rows
    .map((row) => {
      const out: StatsRow = { ts: row.ts, ...totalsOf(row) };
      if (groupBy !== undefined) out.group = groupValue(groupBy, row.group!, labelValue);
      return out;
    })
    .sort(byTimeAndGroup);
}

/** Totals of the groups that hold turns, by group value. */
export function totalsRowsOf(rows: readonly (SummedRow & { group: number | string | null })[], groupBy: GroupBy | undefined, labelValue: LabelValue): TotalsRow[] {
  return rows
    .filter((row) => row.turns > 0)
    .map((row) => {
      const out = totalsOf(row);
      if (groupBy !== undefined) out.group = groupValue(groupBy, row.group!, labelValue);
      return out;
    })
    .sort(byTimeAndGroup);
}

export function sessionSummaryOf(
  row: SummedRow & { sessionId: string; firstSeen: number; lastSeen: number },
  agentIds: readonly number[],
  labelValue: LabelValue,
): SessionSummary {
  return {
    sessionId: row.sessionId,
    agentIds: agentIds.map((id) => labelValue(id) ?? 'main').sort(),
    firstSeen: row.firstSeen,
    lastSeen: row.lastSeen,
    ...totalsOf(row),
  };
}

/** Break causes, most breaks first. */
export function breakCauseRowsOf(rows: { reason: string; cause: string; breaks: number; missed: number; microUsd: number; unpriced: number }[]): BreakCauseRow[] {
  return rows
    .map((row) => ({
      reason: row.reason as BreakReason,
      cause: row.cause === '' ? null : (row.cause as BreakCause),
      breaks: row.breaks,
      missedCacheReadTokens: row.missed,
      ...costOf(row.breaks, row.microUsd, row.unpriced),
    }))
    .sort((a, b) => b.breaks - a.breaks || a.reason.localeCompare(b.reason) || (a.cause ?? '').localeCompare(b.cause ?? ''));
}

/**
 * Whether the tokens harnesses reported as metrics belong in these stats: they
 * have a model but no provider, agent or reason, so they are left out when
 * those are grouped or filtered on.
 */
export function withReportedTokens(query: StatsQuery): boolean {
  const f: Filters = query.filters;
  return !((query.groupBy && query.groupBy !== 'model') || f.provider || f.agentId || f.reason);
}

/** Adds reported tokens to the buckets (creating a bucket where only they exist), in place. */
export function addReportedTokens(stats: StatsRow[], rows: readonly { ts: number; group: string | undefined; kind: string; tokens: number }[]): void {
  const byKey = new Map(stats.map((row) => [`${row.ts}\u0000${row.group ?? ''}`, row]));
  for (const r of rows) {
    const key = `${r.ts}\u0000${r.group ?? ''}`;
    let row = byKey.get(key);
    if (!row) {
      row = {
        ts: r.ts,
        turns: 0,
        breaks: 0,
        cacheRate: null,
        tokens: { uncached: 0, read: 0, write: 0, write1h: 0, output: 0 },
        unreportedInputTokens: 0,
        missedCacheReadTokens: 0,
        estimatedExtraCostUsd: 0,
        unpricedBreaks: 0,
        ...(r.group !== undefined ? { group: r.group } : {}),
      };
      byKey.set(key, row);
      stats.push(row);
    }
    row.reportedTokens ??= {};
    row.reportedTokens[r.kind] = (row.reportedTokens[r.kind] ?? 0) + r.tokens;
  }
  stats.sort(byTimeAndGroup);
}

/**
 * The rollups' sums over all time per label set of the counters: few rows,
 * whatever the number of minutes. Plain SQL that every backend runs.
 */
export const STORED_COUNTS_SQL = `SELECT p.name AS project, m.value AS model, v.value AS provider, r.state, r.reason, sum(r.turns) AS turns,
    sum(r.uncached) + sum(r.unmeasured_input) AS uncached, sum(r.read) AS read, sum(r.write) AS write, sum(r.output) AS output,
    sum(r.breaks) AS breaks, sum(r.missed) AS missed, sum(r.extra_cost_micro_usd) AS "microUsd", sum(r.unpriced) AS unpriced
  FROM rollups r JOIN projects p ON p.id = r.project_id JOIN labels m ON m.id = r.model_id JOIN labels v ON v.id = r.provider_id
  GROUP BY r.project_id, p.name, r.model_id, m.value, r.provider_id, v.value, r.state, r.reason
  HAVING sum(r.turns) > 0`;

export interface StoredCountsRow {
  project: string; model: string; provider: string; state: number; reason: string; turns: number;
  uncached: number; read: number; write: number; output: number; breaks: number; missed: number; microUsd: number; unpriced: number;
}

/** The label sets of the counters from the rows of STORED_COUNTS_SQL, ordered by their values. */
export function storedCountsOf(rows: readonly StoredCountsRow[]): StoredCounts[] {
  const key = (r: StoredCountsRow) => [r.project, r.model, r.provider, String(r.state).padStart(3, '0'), r.reason].join('\u0000');
  return rows.map((r) => ({ r, key: key(r) })).sort((a, b) => byCodePoint(a.key, b.key)).map(({ r }) => storedCountOf(r));
}

function storedCountOf(r: StoredCountsRow): StoredCounts {
  return {
    project: r.project,
    model: r.model,
    provider: r.provider,
    state: TURN_STATES[r.state]!,
    reason: r.reason,
    turns: r.turns,
    // Unreported usage counts all its input as uncached, as ObservedTurn does.
    tokens: { uncached: r.uncached, read: r.read, write: r.write, output: r.output },
    breaks: r.breaks,
    missed: r.missed,
    extraCostUsd: r.microUsd / 1_000_000,
    unpriced: r.unpriced,
  };
}

/** A session's turns as views, given in stream order with their stored state and break record. */
export function turnViewsOf(turns: readonly { turn: Turn; state: number | null; record: string | null }[]): TurnView[] {
  // Baselines and overlaps follow from the turns themselves, stream by stream.
  const placed = new Map<string, { previousRequestId: string | null; concurrentRequestIds: string[] }>();
  const streamsOf = new Map<string, Turn[]>();
  for (const { turn } of turns) {
    const stream = streamsOf.get(turn.agentId);
    if (stream) stream.push(turn);
    else streamsOf.set(turn.agentId, [turn]);
  }
  for (const stream of streamsOf.values()) for (const [id, place] of placements(stream)) placed.set(id, place);
  return turns.map(({ turn, state, record }): TurnView => ({
    requestId: turn.requestId,
    agentId: turn.agentId,
    ts: turn.ts,
    endTs: turn.endTs ?? null,
    ttftMs: turn.ttftMs ?? null,
    provider: turn.provider ?? null,
    model: turn.model ?? null,
    state: state === null ? null : TURN_STATES[state]!,
    usage: turn.usage
      ? {
          uncached: turn.usage.uncached,
          read: turn.usage.read,
          write: turn.usage.write,
          write1h: turn.usage.write1h,
          output: turn.usage.output,
          cacheReported: turn.usage.cacheReported,
        }
      : null,
    expectMiss: turn.expectMiss ?? null,
    ...placed.get(turn.requestId)!,
    break: record === null ? null : (storedBreak(record) ?? null),
  }));
}

/** A harness-reported break as a stored row holds it. */
export function externalBreakOf(r: ExternalBreak): ExternalBreak {
  return {
    harness: r.harness,
    sessionId: r.sessionId,
    agentId: r.agentId,
    source: r.source,
    ts: r.ts,
    reason: r.reason,
    callNumber: r.callNumber,
    previousCacheReadTokens: r.previousCacheReadTokens,
    currentCacheReadTokens: r.currentCacheReadTokens,
    cacheCreationTokens: r.cacheCreationTokens,
    diffPath: r.diffPath,
    file: r.file,
    line: r.line,
  };
}
