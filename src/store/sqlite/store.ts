// The SQLite implementation of Store: writes through the Writer, reads with
// drizzle over indexes and rollups.
import { and, asc, desc, eq, inArray, sql, type SQL } from 'drizzle-orm';
import type { DetectionOptions } from '../../core/options.js';
import type { BreakRecord } from '../../core/types.js';
import { BUSY_TIMEOUT_MS, openDatabase, READER_CACHE_SIZE, type OpenOptions } from '../db.js';
import { breakCauseRollups, breakToolRollups, breaks as breaksTable, reportedTokens, rollups, sessions as sessionsTable, streams } from '../schema.js';
import {
  InvalidQueryError,
  type ApiKey,
  type KeyState,
  type BreakCauseRow,
  type BreakPrefixes,
  type IngestBatch,
  type BreakFilters,
  type BreakOrder,
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
  type StoreErrorKind,
  type ExternalBreak,
  type ExternalBreakFilters,
  type TailCheckpoint,
  type TimeRange,
  type TotalsQuery,
  type TotalsRow,
  type TurnView,
  type StoredCounts,
  type StreamSums,
  type Pairing,
  type WaitBounds,
  type WaitingHalf,
  type WaitingUsage,
  type WriteResult,
} from '../store.js';
import { agentSessionsQuery, sessionPage, wholeSessionsQuery } from '../session-queries.js';
import { bucketMinutes, bucketOf, groupColumnOf, groupSums, sumOf } from '../sum-columns.js';
import { Dictionary } from './dictionary.js';
import { GAPS_VERSION } from '../evaluate/gaps.js';
import {
  coldTurnOf,
  coldTurnsQuery,
  gapRowsOf,
  gapRowsQuery,
  lowRateStreamsQuery,
  streamSnapshotsOf,
  streamSnapshotsQuery,
  streamSumsOf,
  type ColdTurnRow,
  type GapRowsRow,
  type LowRateRow,
} from '../insight-queries.js';
import type { ColdTurn } from '../../core/insights/fanout.js';
import type { StreamSnapshot } from '../../core/insights/chronic.js';
import type { GapRow } from '../../core/insights/ttl.js';
import {
  addReportedTokens,
  breakCauseRowsOf,
  sessionSummaryOf,
  statsRowsOf,
  STORED_COUNTS_SQL,
  storedCountsOf,
  totalsRowsOf,
  turnViewsOf,
  withReportedTokens,
  type StoredCountsRow,
} from '../summaries.js';
import { allOf, breakConditions, breakPage, labelIds, rangeConditions, rollupConditions, type LabelKind } from '../filters.js';
import { ridOf, rowToParts, storedBreak, turnColumns, type TurnRow } from './rows.js';
import { allRows } from './raw.js';
import { Writer } from './writer.js';
import { startWriteThread, type WriteThread, type WriteThreadData } from './write-thread-pool.js';
import { classifySqliteError } from './errors.js';
import { reevaluateInSteps } from '../evaluate/reevaluation.js';
import { startCheckpointer, type Checkpointer } from './checkpointer.js';
import { Retention } from './retention.js';
import { KeyStore } from './keys.js';
import { HalfStore } from './halves.js';
import { forgetCheckpoints, readCheckpoints, readExternalBreaks } from './tail.js';
import { RULES_VERSION } from '../../core/stream.js';
import { toTurn } from '../../core/join.js';

export class SqliteStore implements Store {
  private readonly opened;
  private readonly dictionary: Dictionary;
  private readonly writer: Writer;
  private readonly checkpointer: Checkpointer | undefined;
  private readonly retention: Retention;
  private readonly keys: KeyStore;
  private readonly halves: HalfStore;
  private writeThread: WriteThread | undefined;

  private readonly labelValue = (id: number) => this.dictionary.labelValue(id);
  private readonly labelId = (kind: LabelKind, value: string) => this.dictionary.existingLabel(kind, value);

  constructor(path: string, options: DetectionOptions, open: OpenOptions = {}) {
    this.opened = openDatabase(path, open);
    this.dictionary = new Dictionary(this.opened.sqlite);
    this.writer = new Writer(this.opened.sqlite, this.dictionary, options);
    if (open.backgroundCheckpoint && !open.readonly) this.checkpointer = startCheckpointer(path);
    this.retention = new Retention(this.opened.sqlite);
    this.keys = new KeyStore(this.opened.db, this.dictionary);
    this.halves = new HalfStore(this.opened.sqlite);
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
    const result = await reevaluateInSteps(
      streamRows,
      (ids) => {
        try {
          return this.writer.reevaluate(ids);
        } catch (error) {
          this.dictionary.forget();
          this.writer.forget();
          throw error;
        }
      },
      progress,
    );
    this.recordRules();
    return result;
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

  /**
   * In the write thread when there is one (writeInThread), else here. Here,
   * while another connection holds the write lock, a write is tried again
   * after a pause, for as long as SQLite's busy timeout would have waited:
   * SQLite's own wait spins on this thread and would stop every request of
   * the process meanwhile.
   */
  async write(batches: readonly IngestBatch[]): Promise<WriteResult> {
    if (this.writeThread) return this.writeThread.request(batches);
    return this.whenUnlocked(() => this.writer.ingest(batches));
  }

  /**
   * Makes every later write in a thread of its own (write-thread.ts), for a
   * server that proxies: the main thread then only hands the events over and
   * reads the outcome, and the calls streaming through it go on while the
   * turns are joined, judged and written.
   */
  async writeInThread(data: WriteThreadData, stderr: (line: string) => void): Promise<void> {
    this.writeThread = await startWriteThread(data, stderr);
    // The thread's connection keeps the pages ingest writes; this one now reads little (keys, halves, sums).
    this.opened.sqlite.pragma(`cache_size = ${READER_CACHE_SIZE}`);
  }

  /**
   * Runs a write transaction, failing at once (SQLITE_BUSY) while another
   * connection holds the write lock and trying again after short pauses, up
   * to BUSY_TIMEOUT_MS in all: the wait is asleep, so the process (the
   * proxy's calls too) goes on meanwhile.
   */
  private async whenUnlocked<T>(attempt: () => T): Promise<T> {
    const deadline = performance.now() + BUSY_TIMEOUT_MS;
    for (let pause = 2; ; pause = Math.min(2 * pause, 50)) {
      const sqlite = this.opened.sqlite;
      sqlite.pragma('busy_timeout = 0');
      try {
        return attempt();
      } catch (error) {
        if (!/^SQLITE_BUSY/.test(String((error as { code?: unknown }).code)) || performance.now() + pause > deadline) throw error;
      } finally {
        sqlite.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
      }
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
  }

  async breaks(project: string, range: TimeRange, filters: BreakFilters, page: PageQuery, order: BreakOrder = 'recent'): Promise<Page<BreakRecord>> {
    const projectId = this.dictionary.existingProject(project);
    if (projectId === undefined) return { items: [], nextCursor: null };
    const b = breaksTable;
    const explored = breakPage(b, filters, page, order, (names) => sql`EXISTS (SELECT 1 FROM json_each(${b.changedTools}) WHERE value IN ${names})`);
    const rows = this.opened.db
      .select({ turnId: b.turnId, ts: b.ts, record: b.record })
      .from(b)
      .where(allOf([...this.breakConditions(projectId, range, filters), ...explored.conditions]))
      .orderBy(...explored.orderBy)
      .limit(page.limit + 1)
      .offset(explored.offset)
      .all();
    const items = rows.slice(0, page.limit).flatMap((r) => storedBreak(r.record) ?? []);
    return { items, nextCursor: explored.next(rows) };
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
    const { after, offset, next } = sessionPage(page, order);
    const rows = filters.agentId
      ? this.sessionsOfAgents(projectId, range, filters, page.limit + 1, offset, order, after)
      : this.wholeSessions(projectId, range, filters, page.limit + 1, offset, order, after);
    const items = rows.slice(0, page.limit).map((r) => sessionSummaryOf(r, r.agentIds.split(',').map(Number), this.labelValue));
    return { items, nextCursor: next(rows) };
  }

  /** Sessions active in the range, each with the sums of all its streams: one row each, in the order of an index. */
  private wholeSessions(projectId: number, range: TimeRange, filters: Filters, limit: number, offset: number, order: SessionOrder, after?: [number, string]) {
    const s = sessionsTable;
    // A ranking walks its own index and filters the range as it goes: the unary + keeps the
    // planner from reading every session in range through sessions_last_ts and sorting them.
    const lastTs = order === 'recent' ? sql`${s.lastTs}` : sql`+${s.lastTs}`;
    const q = wholeSessionsQuery(s, projectId, range, filters, order, after, (id) => id, lastTs);
    const found = this.opened.db.select(q.selection).from(s).where(q.where).orderBy(...q.ordering).limit(limit).offset(offset).all();
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
    const agents = labelIds(this.labelId, 'agent', filters.agentId)!;
    const q = agentSessionsQuery(s, projectId, range, filters, agents, order, after, (id) => id);
    return this.opened.db
      .select({ ...q.selection, agentIds: sql<string>`group_concat(${s.agentId})` })
      .from(s)
      .where(q.where)
      .groupBy(s.sessionId)
      .having(q.having)
      .orderBy(...q.ordering)
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
        'SELECT session_id FROM streams WHERE project_id = ? AND last_ts >= ? AND first_ts < ? ORDER BY last_ts DESC, id DESC',
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
      .where(allOf(rollupConditions(this.labelId, r, projectId, range, filters)))
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

  private breakConditions(projectId: number, range: TimeRange, filters: Filters): SQL[] {
    const b = breaksTable;
    // A session's breaks are few: the unary + keeps the planner off the
    // project-and-time index, which would walk every break of the project.
    const project = filters.sessionId ? sql`+${b.projectId} = ${projectId}` : eq(b.projectId, projectId);
    return breakConditions(this.labelId, b, projectId, range, filters, project);
  }

  async breakPrefixes(project: string, requestId: string): Promise<BreakPrefixes | null> {
    const projectId = this.dictionary.existingProject(project);
    if (projectId === undefined) return null;
    const turn = this.opened.sqlite.prepare<[number, number, string], TurnRow & { record: string | null }>(
      `SELECT ${turnColumns('t')}, b.record FROM turns t LEFT JOIN breaks b ON b.turn_id = t.id
       WHERE t.rid = ? AND t.project_id = ? AND t.request_id = ?`,
    );
    const found = turn.get(ridOf(requestId), projectId, requestId);
    const record = found?.record ? storedBreak(found.record) : undefined;
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
    return turnViewsOf(
      rows.flatMap((row) => {
        const turn = toTurn(rowToParts(row, this.dictionary));
        return turn ? [{ turn, state: row.state, record: row.record }] : [];
      }),
    );
  }

  async stats(project: string, query: StatsQuery): Promise<StatsRow[]> {
    const projectId = this.dictionary.existingProject(project);
    if (projectId === undefined) return [];
    const r = rollups;
    const minutes = bucketMinutes(query.intervalMs);
    const bucket = bucketOf(r.minute, minutes);
    const groupColumn = groupColumnOf(r, query.groupBy ?? 'model');
    const conditions = rollupConditions(this.labelId, r, projectId, query, query.filters);
    if (query.filters.sessionId) {
      throw new InvalidQueryError('sessionId', 'stats are kept per minute, not per session; use /v1/sessions');
    }
    const grouped = query.groupBy !== undefined;
    const selection = {
      ts: bucket,
      group: grouped ? groupColumn : sql<null>`NULL`,
      ...groupSums(r),
    };
    const select = this.opened.db
      .select(selection)
      .from(r)
      .where(allOf(conditions))
      .groupBy(...(grouped ? [bucket, groupColumn] : [bucket]));
    const rows = allRows(this.opened.sqlite, select, Object.keys(selection));
    const stats = statsRowsOf(rows, query.groupBy, this.labelValue);
    if (withReportedTokens(query)) addReportedTokens(stats, this.reportedTokens(projectId, query, minutes));
    return stats;
  }

  async totals(project: string, query: TotalsQuery): Promise<TotalsRow[]> {
    const projectId = this.dictionary.existingProject(project);
    if (projectId === undefined) return [];
    if (query.filters.sessionId) {
      throw new InvalidQueryError('sessionId', 'totals are kept per minute, not per session; use /v1/sessions');
    }
    const r = rollups;
    const groupColumn = query.groupBy ? groupColumnOf(r, query.groupBy) : undefined;
    const rows = this.opened.db
      .select({
        group: groupColumn ?? sql<null>`NULL`,
        ...groupSums(r),
      })
      .from(r)
      .where(allOf(rollupConditions(this.labelId, r, projectId, query, query.filters)))
      .groupBy(...(groupColumn ? [groupColumn] : []))
      .all();
    return totalsRowsOf(rows, query.groupBy, this.labelValue);
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
        .where(allOf(rollupConditions(this.labelId, r, projectId, range, filters)))
        .groupBy(r.reason, r.cause)
        .having(sql`${breaks} > 0`)
        .all();
    }
    return breakCauseRowsOf(rows);
  }

  async gapRows(project: string, range: TimeRange, filters: Filters): Promise<GapRow[]> {
    const projectId = this.dictionary.existingProject(project);
    if (projectId === undefined) return [];
    return gapRowsOf(this.opened.db.all<GapRowsRow>(gapRowsQuery(this.labelId, projectId, range, filters)));
  }

  async lowRateStreams(project: string, range: TimeRange, filters: Filters, minTurns: number, maxRate: number, limit: number): Promise<StreamSums[]> {
    const projectId = this.dictionary.existingProject(project);
    if (projectId === undefined) return [];
    const query = lowRateStreamsQuery(this.labelId, projectId, range, filters, minTurns, maxRate, limit, (text) => text);
    return this.opened.db.all<LowRateRow>(query).map(streamSumsOf);
  }

  async streamSnapshots(project: string, sessionId: string, agentId: string, limit: number): Promise<StreamSnapshot[]> {
    const projectId = this.dictionary.existingProject(project);
    const streamId = projectId === undefined ? undefined : this.dictionary.existingStream(projectId, sessionId, agentId);
    if (streamId === undefined) return [];
    return streamSnapshotsOf(this.opened.db.all<TurnRow>(streamSnapshotsQuery(turnColumns('t'), streamId, limit, (text) => text)), this.dictionary);
  }

  async coldTurns(project: string, range: TimeRange, filters: Filters, limit: number): Promise<ColdTurn[]> {
    const projectId = this.dictionary.existingProject(project);
    if (projectId === undefined) return [];
    return this.opened.db.all<ColdTurnRow>(coldTurnsQuery(this.labelId, projectId, range, filters, limit, (text) => text)).map(coldTurnOf);
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
    return storedCountsOf(this.opened.sqlite.prepare<[], StoredCountsRow>(STORED_COUNTS_SQL).all());
  }

  /** The tokens harnesses reported as metrics, per bucket, model (the group, when grouped by model) and kind. */
  private reportedTokens(projectId: number, query: StatsQuery, minutes: number) {
    const t = reportedTokens;
    const bucket = bucketOf(t.minute, minutes);
    const models = labelIds(this.labelId, 'model', query.filters.model);
    return this.opened.db
      .select({ ts: bucket, modelId: t.modelId, kind: t.kind, tokens: sumOf(t.tokens) })
      .from(t)
      .where(allOf([eq(t.projectId, projectId), ...rangeConditions(t.minute, query, 60_000), ...(models ? [inArray(t.modelId, models)] : [])]))
      .groupBy(bucket, t.modelId, t.kind)
      .all()
      .map((r) => ({ ...r, group: query.groupBy === 'model' ? (this.dictionary.labelValue(r.modelId) ?? '') : undefined }));
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

  async keysWithHashes(): Promise<(ApiKey & { hash: string })[]> {
    return this.keys.withHashes();
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
    return readExternalBreaks(this.opened.db, projectId, range, filters, page);
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

  // --- OTLP join halves ---

  async pairHalf(project: string, half: WaitingHalf, bounds: WaitBounds): Promise<Pairing> {
    return this.whenUnlocked(() => this.halves.pair(this.dictionary.project(project), half, bounds, true));
  }

  async putBackHalf(project: string, half: WaitingHalf, bounds: WaitBounds): Promise<Pairing> {
    return this.whenUnlocked(() => this.halves.pair(this.dictionary.project(project), half, bounds, false));
  }

  async trimHalves(now: number): Promise<number> {
    return this.whenUnlocked(() => this.halves.trim(now));
  }

  async ping(): Promise<void> {
    this.opened.sqlite.prepare('SELECT 1').get();
  }

  classifyError(error: unknown): StoreErrorKind | undefined {
    return classifySqliteError(error);
  }

  async close(): Promise<void> {
    await this.writeThread?.close();
    await this.checkpointer?.stop();
    if (this.opened.sqlite.open) this.opened.sqlite.close();
  }
}

