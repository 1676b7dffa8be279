// The SQLite implementation of Store: writes through the Writer, reads with
// drizzle over indexes and rollups.
import { and, asc, desc, eq, gte, inArray, lt, or, sql, type SQL } from 'drizzle-orm';
import type { SQLiteColumn } from 'drizzle-orm/sqlite-core';
import type { DetectionOptions } from '../../core/options.js';
import { cacheRate } from '../../core/rate.js';
import { TURN_STATES, type BreakCause, type BreakReason, type BreakRecord, type Turn } from '../../core/types.js';
import { openDatabase, type OpenOptions } from '../db.js';
import { breakCauseRollups, breakToolRollups, breaks as breaksTable, reportedTokens, rollups, sessions as sessionsTable, streams, type Sums } from '../schema.js';
import {
  InvalidQueryError,
  type ApiKey,
  type KeyState,
  type BreakCauseRow,
  type BreakPrefixes,
  type CostTotals,
  type IngestBatch,
  type Filters,
  type ChangedTool,
  type Page,
  type PageQuery,
  type PruneOptions,
  type PruneResult,
  type ReevaluationResult,
  type SessionOrder,
  type SessionSummary,
  type StatsQuery,
  type StatsRow,
  type Store,
  type ExternalBreak,
  type ExternalBreakFilters,
  type TailCheckpoint,
  type RateTokens,
  type TimeRange,
  type TotalsQuery,
  type TotalsRow,
  type TurnView,
  type StoredCounts,
  type StreamSums,
  type WaitingUsage,
  type WriteResult,
} from '../store.js';
import { Dictionary } from './dictionary.js';
import { coldTurns, gapRows, lowRateStreams, streamSnapshots } from './insights.js';
import type { ColdTurn } from '../../core/insights/fanout.js';
import type { StreamSnapshot } from '../../core/insights/chronic.js';
import type { GapRow } from '../../core/insights/ttl.js';
import { allOf, decodeCursor, encodeCursor, filterConditions, labelIds, rangeConditions } from './filters.js';
import { ridOf, rowToParts, storedJson, turnColumns, type TurnRow } from './rows.js';
import { allRows } from './raw.js';
import { Writer } from './writer.js';
import { startCheckpointer, type Checkpointer } from './checkpointer.js';
import { Retention } from './retention.js';
import { KeyStore } from './keys.js';
import { forgetCheckpoints, readCheckpoints, readExternalBreaks } from './tail.js';
import { placements } from '../../core/history.js';
import { RULES_VERSION } from '../../core/stream.js';
import { toTurn } from '../../core/join.js';

/** Whether every turn's idle gap is in gap_rollups (meta key `gaps`). */
const GAPS_VERSION = '1';

/** Turns evaluated again per transaction when re-evaluating. */
const REEVALUATION_STEP_TURNS = 20_000;

const sumOf = (column: SQLiteColumn) => sql<number>`coalesce(sum(${column}), 0)`;

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

export class SqliteStore implements Store {
  private readonly opened;
  private readonly dictionary: Dictionary;
  private readonly writer: Writer;
  private readonly checkpointer: Checkpointer | undefined;
  private readonly retention: Retention;
  private readonly keys: KeyStore;

  constructor(path: string, options: DetectionOptions, open: OpenOptions = {}) {
    this.opened = openDatabase(path, open);
    this.dictionary = new Dictionary(this.opened.sqlite);
    this.writer = new Writer(this.opened.sqlite, this.dictionary, options);
    if (open.backgroundCheckpoint && !open.readonly) this.checkpointer = startCheckpointer(path);
    this.retention = new Retention(this.opened.sqlite);
    this.keys = new KeyStore(this.opened.db, this.dictionary);
    // A database that holds no judged turn yet is judged by these rules from the start.
    if (!open.readonly && this.rulesVersion() === undefined && !this.opened.sqlite.prepare('SELECT 1 FROM turns WHERE state IS NOT NULL LIMIT 1').get()) {
      this.recordRules();
    }
  }

  async needsReevaluation(): Promise<boolean> {
    // Turns stored before gap_rollups existed (migrations/0011) get their gaps when evaluated again.
    return this.rulesVersion() !== String(RULES_VERSION) || this.meta('gaps') !== GAPS_VERSION;
  }

  private meta(key: string): string | undefined {
    return this.opened.sqlite.prepare<[string], { value: string }>('SELECT value FROM meta WHERE key = ?').get(key)?.value;
  }

  private rulesVersion(): string | undefined {
    return this.meta('rules');
  }

  async reevaluate(progress?: (done: number, total: number) => void): Promise<ReevaluationResult> {
    const streamRows = this.opened.sqlite.prepare<[], { id: number; turns: number }>('SELECT id, turns FROM streams ORDER BY id').all();
    let breaksChanged = 0;
    let done = 0;
    while (done < streamRows.length) {
      // Steps of about STEP_TURNS turns, so that a commit stays short and the process can log between them.
      const step: number[] = [];
      let turns = 0;
      while (done + step.length < streamRows.length && (step.length === 0 || turns < REEVALUATION_STEP_TURNS)) {
        const row = streamRows[done + step.length]!;
        step.push(row.id);
        turns += row.turns;
      }
      try {
        const outcome = this.writer.reevaluate(step);
        breaksChanged += outcome.breaks.length + outcome.revisedBreaks.length + outcome.droppedBreaks;
      } catch (error) {
        this.dictionary.forget();
        this.writer.forget();
        throw error;
      }
      done += step.length;
      progress?.(done, streamRows.length);
      await new Promise((resolve) => setImmediate(resolve));
    }
    this.recordRules();
    return { streams: streamRows.length, breaksChanged };
  }

  private recordRules(): void {
    const put = this.opened.sqlite.prepare(`INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value`);
    put.run('rules', String(RULES_VERSION));
    put.run('gaps', GAPS_VERSION);
  }

  /** The raw handle, for tools that inspect the file (integrity checks, sizes). */
  get sqlite() {
    return this.opened.sqlite;
  }

  async write(batches: readonly IngestBatch[]): Promise<WriteResult> {
    let outcome;
    try {
      outcome = this.writer.write(
        batches.map((b) => ({
          projectId: this.dictionary.project(b.project),
          events: b.events,
          tokenPoints: b.tokenPoints,
          externalBreaks: b.externalBreaks,
          checkpoint: b.checkpoint,
        })),
      );
    } catch (error) {
      // Ids and stream tails cached inside the rolled-back transaction no longer hold.
      this.dictionary.forget();
      this.writer.forget();
      throw error;
    }
    const names = new Map(batches.map((b) => [this.dictionary.project(b.project), b.project]));
    const named = <T extends { projectId: number }>(list: T[]) => list.map(({ projectId, ...rest }) => ({ project: names.get(projectId)!, ...rest }));
    return {
      counts: outcome.counts,
      breaks: named(outcome.breaks),
      revisedBreaks: named(outcome.revisedBreaks),
      observed: outcome.observed.map(({ projectId, turn }) => ({ project: names.get(projectId)!, ...turn })),
      externalBreaks: named(outcome.externalBreaks),
    };
  }

  async breaks(project: string, range: TimeRange, filters: Filters, page: PageQuery): Promise<Page<BreakRecord>> {
    const projectId = this.dictionary.existingProject(project);
    if (projectId === undefined) return { items: [], nextCursor: null };
    const b = breaksTable;
    const conditions = [
      // A session's breaks are few: the unary + keeps the planner off the
      // project-and-time index, which would walk every break of the project.
      filters.sessionId ? sql`+${b.projectId} = ${projectId}` : eq(b.projectId, projectId),
      ...rangeConditions(b.ts, range),
      ...filterConditions(this.dictionary, projectId, filters, {
        model: b.modelId,
        provider: b.providerId,
        agent: b.agentId,
        reason: b.reason,
        stream: b.streamId,
      }),
    ];
    if (page.cursor !== undefined) {
      const [ts, id] = this.cursor(page.cursor, ['number', 'number']) as [number, number];
      conditions.push(or(lt(b.ts, ts), and(eq(b.ts, ts), lt(b.turnId, id)))!);
    }
    const rows = this.opened.db
      .select({ turnId: b.turnId, ts: b.ts, record: b.record })
      .from(b)
      .where(allOf(conditions))
      .orderBy(desc(b.ts), desc(b.turnId))
      .limit(page.limit + 1)
      .all();
    const items = rows.slice(0, page.limit).flatMap((r) => storedJson<BreakRecord>(r.record) ?? []);
    const last = rows[page.limit - 1];
    return { items, nextCursor: rows.length > page.limit && last ? encodeCursor([last.ts, last.turnId]) : null };
  }

  async sessions(
    project: string,
    range: TimeRange,
    filters: Filters,
    page: PageQuery,
    order: SessionOrder = 'recent',
  ): Promise<Page<SessionSummary>> {
    const projectId = this.dictionary.existingProject(project);
    if (projectId === undefined) return { items: [], nextCursor: null };
    // Recent order pages by key; the rankings page by position.
    const after = page.cursor !== undefined && order === 'recent' ? (this.cursor(page.cursor, ['number', 'string']) as [number, string]) : undefined;
    const offset = page.cursor !== undefined && order !== 'recent' ? (this.cursor(page.cursor, ['number'])[0] as number) : 0;
    const rows = filters.agentId
      ? this.sessionsOfAgents(projectId, range, filters, page.limit + 1, offset, order, after)
      : this.wholeSessions(projectId, range, filters, page.limit + 1, offset, order, after);
    const items = rows.slice(0, page.limit).map(
      (r): SessionSummary => ({
        sessionId: r.sessionId,
        agentIds: r.agentIds
          .split(',')
          .map((id) => this.dictionary.labelValue(Number(id)) ?? 'main')
          .sort(),
        firstSeen: r.firstSeen,
        lastSeen: r.lastSeen,
        turns: r.turns,
        breaks: r.breaks,
        cacheRate: cacheRate(r),
        ...rateTokensOf(r),
        missedCacheReadTokens: r.missed,
        ...costOf(r.breaks, r.extraCostMicroUsd, r.unpriced),
      }),
    );
    const last = rows[page.limit - 1];
    const more = rows.length > page.limit && last;
    if (!more) return { items, nextCursor: null };
    return {
      items,
      nextCursor: encodeCursor(order === 'recent' ? [last.lastSeen, last.sessionId] : [offset + page.limit]),
    };
  }

  /** Sessions active in the range, each with the sums of all its streams: one row each, in the order of an index. */
  private wholeSessions(projectId: number, range: TimeRange, filters: Filters, limit: number, offset: number, order: SessionOrder, after?: [number, string]) {
    const s = sessionsTable;
    // A ranking walks its own index and filters the range as it goes: the unary + keeps the
    // planner from reading every session in range through sessions_last_ts and sorting them.
    const lastTs = order === 'recent' ? sql`${s.lastTs}` : sql`+${s.lastTs}`;
    const conditions: SQL[] = [eq(s.projectId, projectId), sql`${lastTs} IS NOT NULL`];
    if (range.from !== undefined) conditions.push(sql`${lastTs} >= ${range.from}`);
    if (range.to !== undefined) conditions.push(lt(s.firstTs, range.to));
    if (filters.sessionId) conditions.push(inArray(s.sessionId, filters.sessionId));
    if (after) conditions.push(sql`(${s.lastTs} < ${after[0]} OR (${s.lastTs} = ${after[0]} AND ${s.sessionId} < ${after[1]}))`);
    const ordering = {
      recent: [desc(s.lastTs), desc(s.sessionId)],
      worst_cache_rate: [asc(s.rateRank), asc(s.sessionId)],
      extra_cost: [desc(s.extraCostMicroUsd), asc(s.sessionId)],
    }[order];
    const found = this.opened.db
      .select({
        sessionId: s.sessionId,
        firstSeen: sql<number>`${s.firstTs}`,
        lastSeen: sql<number>`${s.lastTs}`,
        turns: s.turns,
        breaks: s.breaks,
        unmeasuredInput: s.unmeasuredInput,
        uncached: s.uncached,
        read: s.read,
        write: s.write,
        write1h: s.write1h,
        output: s.output,
        missed: s.missed,
        extraCostMicroUsd: s.extraCostMicroUsd,
        unpriced: s.unpriced,
      })
      .from(s)
      .where(allOf(conditions))
      .orderBy(...ordering)
      .limit(limit)
      .offset(offset)
      .all();
    if (found.length === 0) return [];
    const agents = new Map(
      this.opened.db
        .select({ sessionId: streams.sessionId, agentIds: sql<string>`group_concat(${streams.agentId})` })
        .from(streams)
        .where(and(eq(streams.projectId, projectId), inArray(streams.sessionId, found.map((r) => r.sessionId)), sql`${streams.lastTs} IS NOT NULL`))
        .groupBy(streams.sessionId)
        .all()
        .map((r) => [r.sessionId, r.agentIds]),
    );
    return found.map((r) => ({ ...r, agentIds: agents.get(r.sessionId) ?? '' }));
  }

  /** With an agent filter, a session's figures are those of the chosen agents' streams: grouped from the streams. */
  private sessionsOfAgents(projectId: number, range: TimeRange, filters: Filters, limit: number, offset: number, order: SessionOrder, after?: [number, string]) {
    const s = streams;
    // A stream whose only turns moved to another agent's stream has no span left.
    const conditions: SQL[] = [eq(s.projectId, projectId), sql`${s.lastTs} IS NOT NULL`];
    if (range.from !== undefined) conditions.push(gte(s.lastTs, range.from));
    if (range.to !== undefined) conditions.push(lt(s.firstTs, range.to));
    conditions.push(inArray(s.agentId, labelIds(this.dictionary, 'agent', filters.agentId)!));
    if (filters.sessionId) conditions.push(inArray(s.sessionId, filters.sessionId));
    const lastSeen = sql<number>`max(${s.lastTs})`;
    const having: SQL[] = [sql`${lastSeen} IS NOT NULL`];
    if (after) having.push(sql`(${lastSeen} < ${after[0]} OR (${lastSeen} = ${after[0]} AND ${s.sessionId} < ${after[1]}))`);
    const rate = sql`sum(${s.read}) * 1.0 / nullif(sum(${s.uncached}) + sum(${s.read}) + sum(${s.write}), 0)`;
    const ordering = {
      recent: [desc(lastSeen), desc(s.sessionId)],
      worst_cache_rate: [sql`${rate} IS NULL`, sql`${rate} ASC`, asc(s.sessionId)],
      extra_cost: [sql`sum(${s.extraCostMicroUsd}) DESC`, asc(s.sessionId)],
    }[order];
    return this.opened.db
      .select({
        sessionId: s.sessionId,
        agentIds: sql<string>`group_concat(${s.agentId})`,
        firstSeen: sql<number>`min(${s.firstTs})`,
        lastSeen,
        turns: sumOf(s.turns),
        breaks: sumOf(s.breaks),
        unmeasuredInput: sumOf(s.unmeasuredInput),
        uncached: sumOf(s.uncached),
        read: sumOf(s.read),
        write: sumOf(s.write),
        write1h: sumOf(s.write1h),
        output: sumOf(s.output),
        missed: sumOf(s.missed),
        extraCostMicroUsd: sumOf(s.extraCostMicroUsd),
        unpriced: sumOf(s.unpriced),
      })
      .from(s)
      .where(allOf(conditions))
      .groupBy(s.sessionId)
      .having(and(...having))
      .orderBy(...ordering)
      .limit(limit)
      .offset(offset)
      .all();
  }

  async recentSessionIds(project: string, range: TimeRange, limit: number): Promise<string[]> {
    const projectId = this.dictionary.existingProject(project);
    if (projectId === undefined) return [];
    // Streams newest first down the streams_last_ts index, stopping at `limit` sessions: no grouping of every session in range.
    const rows = this.opened.sqlite
      .prepare<[number, number, number], { session_id: string }>(
        'SELECT session_id FROM streams WHERE project_id = ? AND last_ts >= ? AND first_ts < ? ORDER BY last_ts DESC',
      )
      .iterate(projectId, range.from ?? Number.MIN_SAFE_INTEGER, range.to ?? Number.MAX_SAFE_INTEGER);
    const ids = new Set<string>();
    for (const row of rows) {
      ids.add(row.session_id);
      if (ids.size >= limit) break;
    }
    return [...ids];
  }

  async changedTools(project: string, range: TimeRange, filters: Filters, limit: number): Promise<ChangedTool[]> {
    const projectId = this.dictionary.existingProject(project);
    if (projectId === undefined) return [];
    // Per minute from the break rollups; one session's breaks are few enough to read themselves.
    if (filters.sessionId) return this.sessionChangedTools(projectId, range, filters, limit);
    const r = breakToolRollups;
    const count = sql<number>`sum(${r.breaks})`;
    return this.opened.db
      .select({ name: r.tool, breaks: count })
      .from(r)
      .where(allOf([eq(r.projectId, projectId), ...this.breakRollupConditions(r, projectId, range, filters)]))
      .groupBy(r.tool)
      .having(sql`${count} > 0`)
      .orderBy(desc(count), asc(r.tool))
      .limit(limit)
      .all();
  }

  private sessionChangedTools(projectId: number, range: TimeRange, filters: Filters, limit: number): ChangedTool[] {
    const b = breaksTable;
    const tool = sql<string>`tool.value`;
    const count = sql<number>`count(*)`;
    return this.opened.db
      .select({ name: tool, breaks: count })
      .from(sql`${b}, json_each(${b.changedTools}) AS tool`)
      .where(allOf(this.breakConditions(projectId, range, filters)))
      .groupBy(tool)
      .orderBy(desc(count), asc(tool))
      .limit(limit)
      .all();
  }

  /** Range and filters on a break rollup (not per session). */
  private breakRollupConditions(r: typeof breakCauseRollups | typeof breakToolRollups, projectId: number, range: TimeRange, filters: Filters): SQL[] {
    return [
      ...rangeConditions(r.minute, range, 60_000),
      ...filterConditions(this.dictionary, projectId, filters, { model: r.modelId, provider: r.providerId, agent: r.agentId, reason: r.reason }),
    ];
  }

  private breakConditions(projectId: number, range: TimeRange, filters: Filters): SQL[] {
    const b = breaksTable;
    return [
      filters.sessionId ? sql`+${b.projectId} = ${projectId}` : eq(b.projectId, projectId),
      ...rangeConditions(b.ts, range),
      ...filterConditions(this.dictionary, projectId, filters, {
        model: b.modelId,
        provider: b.providerId,
        agent: b.agentId,
        reason: b.reason,
        stream: b.streamId,
      }),
    ];
  }

  async breakPrefixes(project: string, requestId: string): Promise<BreakPrefixes | null> {
    const projectId = this.dictionary.existingProject(project);
    if (projectId === undefined) return null;
    const turn = this.opened.sqlite.prepare<[number, number, string], TurnRow & { record: string | null }>(
      `SELECT ${turnColumns('t')}, b.record FROM turns t LEFT JOIN breaks b ON b.turn_id = t.id
       WHERE t.rid = ? AND t.project_id = ? AND t.request_id = ?`,
    );
    const found = turn.get(ridOf(requestId), projectId, requestId);
    const record = found?.record ? storedJson<BreakRecord>(found.record) : undefined;
    if (!found || !record) return null;
    const baseline = turn.get(ridOf(record.previousRequestId), projectId, record.previousRequestId);
    const prefixOf = (row: TurnRow | undefined) => (row ? (rowToParts(row, this.dictionary).snapshot?.prefix ?? null) : null);
    return { break: record, baseline: prefixOf(baseline), turn: prefixOf(found) };
  }

  async sessionTurns(project: string, sessionId: string): Promise<TurnView[] | null> {
    const projectId = this.dictionary.existingProject(project);
    if (projectId === undefined) return null;
    const ids = this.opened.db
      .select({ id: streams.id })
      .from(streams)
      .where(and(eq(streams.projectId, projectId), eq(streams.sessionId, sessionId)))
      .all()
      .map((r) => r.id);
    if (ids.length === 0) return null;
    const rows = this.opened.sqlite
      .prepare<number[], TurnRow & { record: string | null }>(
        `SELECT ${turnColumns('t')}, b.record FROM turns t
         LEFT JOIN breaks b ON b.turn_id = t.id
         WHERE t.stream_id IN (${ids.map(() => '?').join(',')}) AND t.ts IS NOT NULL
         ORDER BY t.ts, t.request_id`,
      )
      .all(...ids);
    const turns = rows.flatMap((row) => {
      const turn = toTurn(rowToParts(row, this.dictionary));
      return turn ? [{ turn, row }] : [];
    });
    // Baselines and overlaps follow from the turns themselves, stream by stream (rows come in stream order).
    const placed = new Map<string, { previousRequestId: string | null; concurrentRequestIds: string[] }>();
    const streamsOf = new Map<string, Turn[]>();
    for (const { turn } of turns) {
      const stream = streamsOf.get(turn.agentId);
      if (stream) stream.push(turn);
      else streamsOf.set(turn.agentId, [turn]);
    }
    for (const stream of streamsOf.values()) for (const [id, place] of placements(stream)) placed.set(id, place);
    return turns.map(({ turn, row }): TurnView => ({
      requestId: turn.requestId,
      agentId: turn.agentId,
      ts: turn.ts,
      endTs: turn.endTs ?? null,
      ttftMs: turn.ttftMs ?? null,
      provider: turn.provider ?? null,
      model: turn.model ?? null,
      state: row.state === null ? null : TURN_STATES[row.state]!,
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
      break: row.record === null ? null : (storedJson<BreakRecord>(row.record) ?? null),
    }));
  }

  async stats(project: string, query: StatsQuery): Promise<StatsRow[]> {
    const projectId = this.dictionary.existingProject(project);
    if (projectId === undefined) return [];
    const r = rollups;
    const minutes = Math.max(1, Math.round(query.intervalMs / 60_000));
    // Inlined, not bound: better-sqlite3 binds numbers as REAL, which would make this a float division.
    const bucket = sql<number>`(${r.minute} / ${sql.raw(String(minutes))}) * ${sql.raw(String(minutes * 60_000))}`;
    const groupColumn = {
      model: r.modelId,
      provider: r.providerId,
      agentId: r.agentId,
      reason: r.reason,
    }[query.groupBy ?? 'model'];
    const conditions = [
      eq(r.projectId, projectId),
      ...rangeConditions(r.minute, query, 60_000),
      ...filterConditions(this.dictionary, projectId, query.filters, {
        model: r.modelId,
        provider: r.providerId,
        agent: r.agentId,
        reason: r.reason,
      }),
    ];
    if (query.filters.sessionId) {
      throw new InvalidQueryError('sessionId', 'stats are kept per minute, not per session; use /v1/sessions');
    }
    const grouped = query.groupBy !== undefined;
    const selection = {
      ts: bucket,
      group: grouped ? sql<number | string>`${groupColumn}` : sql<null>`NULL`,
      turns: sumOf(r.turns),
      breaks: sumOf(r.breaks),
      unmeasuredInput: sumOf(r.unmeasuredInput),
      uncached: sumOf(r.uncached),
      read: sumOf(r.read),
      write: sumOf(r.write),
      write1h: sumOf(r.write1h),
      output: sumOf(r.output),
      missed: sumOf(r.missed),
      extraCostMicroUsd: sumOf(r.extraCostMicroUsd),
      unpriced: sumOf(r.unpriced),
    };
    const select = this.opened.db
      .select(selection)
      .from(r)
      .where(allOf(conditions))
      .groupBy(...(grouped ? [bucket, groupColumn] : [bucket]))
      .orderBy(asc(bucket));
    const rows = allRows(this.opened.sqlite, select, Object.keys(selection));
    const stats = rows.map((row): StatsRow => {
      const out: StatsRow = {
        ts: row.ts,
        turns: row.turns,
        breaks: row.breaks,
        cacheRate: cacheRate(row),
        ...rateTokensOf(row),
        missedCacheReadTokens: row.missed,
        ...costOf(row.breaks, row.extraCostMicroUsd, row.unpriced),
      };
      if (grouped) {
        out.group =
          query.groupBy === 'reason' ? String(row.group) : (this.dictionary.labelValue(Number(row.group)) ?? '');
      }
      return out;
    });
    this.mergeReportedTokens(projectId, query, minutes, stats);
    return stats;
  }

  async totals(project: string, query: TotalsQuery): Promise<TotalsRow[]> {
    const projectId = this.dictionary.existingProject(project);
    if (projectId === undefined) return [];
    if (query.filters.sessionId) {
      throw new InvalidQueryError('sessionId', 'totals are kept per minute, not per session; use /v1/sessions');
    }
    const r = rollups;
    const groupColumn = query.groupBy
      ? { model: r.modelId, provider: r.providerId, agentId: r.agentId, reason: r.reason }[query.groupBy]
      : undefined;
    const rows = this.opened.db
      .select({
        group: groupColumn ? sql<number | string>`${groupColumn}` : sql<null>`NULL`,
        turns: sumOf(r.turns),
        breaks: sumOf(r.breaks),
        unmeasuredInput: sumOf(r.unmeasuredInput),
        uncached: sumOf(r.uncached),
        read: sumOf(r.read),
        write: sumOf(r.write),
        write1h: sumOf(r.write1h),
        output: sumOf(r.output),
        missed: sumOf(r.missed),
        extraCostMicroUsd: sumOf(r.extraCostMicroUsd),
        unpriced: sumOf(r.unpriced),
      })
      .from(r)
      .where(
        allOf([
          eq(r.projectId, projectId),
          ...rangeConditions(r.minute, query, 60_000),
          ...filterConditions(this.dictionary, projectId, query.filters, {
            model: r.modelId,
            provider: r.providerId,
            agent: r.agentId,
            reason: r.reason,
          }),
        ]),
      )
      .groupBy(...(groupColumn ? [groupColumn] : []))
      .all();
    return rows
      .filter((row) => row.turns > 0)
      .map((row): TotalsRow => {
        const out: TotalsRow = {
          turns: row.turns,
          breaks: row.breaks,
          cacheRate: cacheRate(row),
          ...rateTokensOf(row),
          missedCacheReadTokens: row.missed,
          ...costOf(row.breaks, row.extraCostMicroUsd, row.unpriced),
        };
        if (query.groupBy) {
          out.group = query.groupBy === 'reason' ? String(row.group) : (this.dictionary.labelValue(Number(row.group)) ?? '');
        }
        return out;
      });
  }

  async breakCauses(project: string, range: TimeRange, filters: Filters): Promise<BreakCauseRow[]> {
    const projectId = this.dictionary.existingProject(project);
    if (projectId === undefined) return [];
    let rows: { reason: string; cause: string; breaks: number; missed: number; microUsd: number; unpriced: number }[];
    if (filters.sessionId) {
      // One session's breaks are few enough to read themselves; summed as the rollups sum them.
      const b = breaksTable;
      const cause = sql<string>`coalesce(${b.cause}, '')`;
      rows = this.opened.db
        .select({
          reason: b.reason,
          cause,
          breaks: sql<number>`count(*)`,
          missed: sql<number>`coalesce(sum(${b.missed}), 0)`,
          microUsd: sql<number>`coalesce(sum(CAST(round(coalesce(${b.extraCostUsd}, 0) * 1000000) AS INTEGER)), 0)`,
          unpriced: sql<number>`coalesce(sum(${b.extraCostUsd} IS NULL), 0)`,
        })
        .from(b)
        .where(allOf(this.breakConditions(projectId, range, filters)))
        .groupBy(b.reason, cause)
        .all();
    } else {
      const r = breakCauseRollups;
      const breaks = sql<number>`sum(${r.breaks})`;
      rows = this.opened.db
        .select({
          reason: r.reason,
          cause: r.cause,
          breaks,
          missed: sql<number>`sum(${r.missed})`,
          microUsd: sql<number>`sum(${r.extraCostMicroUsd})`,
          unpriced: sql<number>`sum(${r.unpriced})`,
        })
        .from(r)
        .where(allOf([eq(r.projectId, projectId), ...this.breakRollupConditions(r, projectId, range, filters)]))
        .groupBy(r.reason, r.cause)
        .having(sql`${breaks} > 0`)
        .all();
    }
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

  async gapRows(project: string, range: TimeRange, filters: Filters): Promise<GapRow[]> {
    const projectId = this.dictionary.existingProject(project);
    return projectId === undefined ? [] : gapRows(this.opened.sqlite, this.dictionary, projectId, range, filters);
  }

  async lowRateStreams(project: string, range: TimeRange, filters: Filters, minTurns: number, maxRate: number, limit: number): Promise<StreamSums[]> {
    const projectId = this.dictionary.existingProject(project);
    if (projectId === undefined) return [];
    return lowRateStreams(this.opened.sqlite, this.dictionary, projectId, range, filters, minTurns, maxRate, limit);
  }

  async streamSnapshots(project: string, sessionId: string, agentId: string, limit: number): Promise<StreamSnapshot[]> {
    const projectId = this.dictionary.existingProject(project);
    const streamId = projectId === undefined ? undefined : this.dictionary.existingStream(projectId, sessionId, agentId);
    return streamId === undefined ? [] : streamSnapshots(this.opened.sqlite, this.dictionary, streamId, limit);
  }

  async coldTurns(project: string, range: TimeRange, filters: Filters, limit: number): Promise<ColdTurn[]> {
    const projectId = this.dictionary.existingProject(project);
    return projectId === undefined ? [] : coldTurns(this.opened.sqlite, this.dictionary, projectId, range, filters, limit);
  }

  async waitingUsage(project?: string): Promise<WaitingUsage[]> {
    // A usage that names no session is stored with no stream (the writer's
    // "turns that no stream holds yet"): a range of turns_stream_ts, and few
    // rows, since they join their turn or retention deletes them.
    const sqlite = this.opened.sqlite;
    if (project !== undefined) {
      const projectId = this.dictionary.existingProject(project);
      if (projectId === undefined) return [{ project, waiting: 0 }];
      const row = sqlite
        .prepare<[number], { waiting: number }>('SELECT count(*) AS waiting FROM "turns" WHERE stream_id IS NULL AND project_id = ?')
        .get(projectId)!;
      return [{ project, waiting: row.waiting }];
    }
    const counts = new Map(
      sqlite
        .prepare<[], { project_id: number; waiting: number }>('SELECT project_id, count(*) AS waiting FROM "turns" WHERE stream_id IS NULL GROUP BY project_id')
        .all()
        .map((r) => [r.project_id, r.waiting]),
    );
    return sqlite
      .prepare<[], { id: number; name: string }>('SELECT id, name FROM projects ORDER BY name')
      .all()
      .map((p) => ({ project: p.name, waiting: counts.get(p.id) ?? 0 }));
  }

  async storedCounts(): Promise<StoredCounts[]> {
    // One row per label set of the counters: few, whatever the number of minutes.
    const rows = this.opened.sqlite
      .prepare<
        [],
        {
          project: string; model: string; provider: string; state: number; reason: string; turns: number;
          uncached: number; read: number; write: number; output: number; breaks: number; missed: number; micro_usd: number; unpriced: number;
        }
      >(
        `SELECT p.name AS project, m.value AS model, v.value AS provider, r.state, r.reason, sum(r.turns) AS turns,
           sum(r.uncached) + sum(r.unmeasured_input) AS uncached, sum(r.read) AS read, sum(r.write) AS write, sum(r.output) AS output,
           sum(r.breaks) AS breaks, sum(r.missed) AS missed, sum(r.extra_cost_micro_usd) AS micro_usd, sum(r.unpriced) AS unpriced
         FROM rollups r JOIN projects p ON p.id = r.project_id JOIN labels m ON m.id = r.model_id JOIN labels v ON v.id = r.provider_id
         GROUP BY r.project_id, r.model_id, r.provider_id, r.state, r.reason
         HAVING sum(r.turns) > 0`,
      )
      .all();
    return rows.map((r) => ({
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
      extraCostUsd: r.micro_usd / 1_000_000,
      unpriced: r.unpriced,
    }));
  }

  /**
   * Adds the tokens harnesses reported as metrics to the buckets (creating a
   * bucket where only they exist). They have a model but no provider, agent or
   * reason, so they are left out when those are grouped or filtered on.
   */
  private mergeReportedTokens(projectId: number, query: StatsQuery, minutes: number, stats: StatsRow[]): void {
    const { filters } = query;
    if ((query.groupBy && query.groupBy !== 'model') || filters.provider || filters.agentId || filters.reason) return;
    const t = reportedTokens;
    const bucket = sql<number>`(${t.minute} / ${sql.raw(String(minutes))}) * ${sql.raw(String(minutes * 60_000))}`;
    const models = labelIds(this.dictionary, 'model', filters.model);
    const rows = this.opened.db
      .select({ ts: bucket, modelId: t.modelId, kind: t.kind, tokens: sumOf(t.tokens) })
      .from(t)
      .where(allOf([eq(t.projectId, projectId), ...rangeConditions(t.minute, query, 60_000), ...(models ? [inArray(t.modelId, models)] : [])]))
      .groupBy(bucket, t.modelId, t.kind)
      .all();
    const byKey = new Map(stats.map((row) => [`${row.ts}\u0000${row.group ?? ''}`, row]));
    for (const r of rows) {
      const group = query.groupBy === 'model' ? (this.dictionary.labelValue(r.modelId) ?? '') : undefined;
      const key = `${r.ts}\u0000${group ?? ''}`;
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
          ...(group !== undefined ? { group } : {}),
        };
        byKey.set(key, row);
        stats.push(row);
      }
      row.reportedTokens ??= {};
      row.reportedTokens[r.kind] = (row.reportedTokens[r.kind] ?? 0) + r.tokens;
    }
    stats.sort((a, b) => a.ts - b.ts);
  }

  async createKey(key: Parameters<Store['createKey']>[0]): Promise<ApiKey> {
    return this.keys.create(key);
  }

  async keysByPrefix(prefix: string): Promise<(ApiKey & { hash: string })[]> {
    return this.keys.byPrefix(prefix);
  }

  async listKeys(): Promise<ApiKey[]> {
    return this.keys.list();
  }

  async revokeKey(idOrPrefix: string, revokedMs: number): Promise<ApiKey | undefined> {
    return this.keys.revoke(idOrPrefix, revokedMs);
  }

  async hasActiveKeys(): Promise<boolean> {
    return this.keys.hasActive();
  }

  async keyState(): Promise<KeyState> {
    return this.keys.state();
  }

  async tailCheckpoints(project: string): Promise<TailCheckpoint[]> {
    const projectId = this.dictionary.existingProject(project);
    return projectId === undefined ? [] : readCheckpoints(this.opened.db, projectId);
  }

  async forgetTailCheckpoints(project: string, fileIds: readonly string[]): Promise<void> {
    const projectId = this.dictionary.existingProject(project);
    if (projectId !== undefined) forgetCheckpoints(this.opened.db, projectId, fileIds);
  }

  async externalBreaks(project: string, range: TimeRange, filters: ExternalBreakFilters, page: PageQuery): Promise<Page<ExternalBreak>> {
    const projectId = this.dictionary.existingProject(project);
    if (projectId === undefined) return { items: [], nextCursor: null };
    const after = page.cursor === undefined ? undefined : (this.cursor(page.cursor, ['number', 'number']) as [number, number]);
    return readExternalBreaks(this.opened.db, projectId, range, filters, page, after);
  }

  async prune(options: PruneOptions): Promise<PruneResult> {
    const result = await this.retention.prune(options);
    // Streams can be gone: their cached ids and tails must not be used again.
    if (result.rollups > 0) {
      this.dictionary.forget();
      this.writer.forget();
    }
    return result;
  }

  async ping(): Promise<void> {
    this.opened.sqlite.prepare('SELECT 1').get();
  }

  async close(): Promise<void> {
    await this.checkpointer?.stop();
    if (this.opened.sqlite.open) this.opened.sqlite.close();
  }

  private cursor(cursor: string, shape: ('string' | 'number')[]): (string | number)[] {
    const values = decodeCursor(cursor, shape);
    if (!values) throw new InvalidQueryError('cursor', 'not a cursor this server issued; pass nextCursor unchanged');
    return values;
  }
}

