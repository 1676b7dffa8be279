// Every read of the PostgreSQL store: the SQLite store's queries over the same
// tables, indexes and rollups, answered through the same builders
// (../summaries.ts), so that both stores give the same answers. Text is
// ordered and compared byte-wise (COLLATE "C"), as SQLite does, whatever the
// database's collation.
import { and, asc, desc, eq, getTableColumns, inArray, sql, type Column, type SQL } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/node-postgres';
import { toTurn } from '../../core/join.js';
import type { BreakRecord } from '../../core/types.js';
import type { LabelKind } from '../evaluate/names.js';
import { allOf, breakConditions, breakPage, externalBreakConditions, labelIds, nextCursor, olderThan, rangeConditions, rollupConditions, type LabelLookup } from '../filters.js';
import { ridOf, rowToParts, storedBreak, TURN_COLUMN_NAMES, type TurnNames, type TurnRow } from '../sqlite/rows.js';
import type {
  BreakCauseRow,
  BreakFilters,
  BreakOrder,
  BreakPrefixes,
  ChangedTool,
  ExternalBreak,
  ExternalBreakFilters,
  Filters,
  Page,
  PageQuery,
  SessionOrder,
  SessionSummary,
  StatsQuery,
  StatsRow,
  StoredCounts,
  StreamSums,
  TimeRange,
  TotalsQuery,
  TotalsRow,
  TurnView,
  WaitingUsage,
} from '../store.js';
import { InvalidQueryError } from '../store.js';
import {
  addReportedTokens,
  breakCauseRowsOf,
  externalBreakOf,
  sessionSummaryOf,
  statsRowsOf,
  STORED_COUNTS_SQL,
  storedCountsOf,
  totalsRowsOf,
  turnViewsOf,
  withReportedTokens,
  type StoredCountsRow,
} from '../summaries.js';
import { agentSessionsQuery, sessionPage, wholeSessionsQuery } from '../session-queries.js';
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
import { bucketMinutes, bucketOf, groupColumnOf, groupSums, sumOf } from '../sum-columns.js';
import type { SqlPool } from './client.js';
import type { PgDrizzle } from './db.js';
import type { PgNames } from './names.js';
import * as schema from './schema.js';
import { breakCauseRollups, breakToolRollups, breaks as breaksTable, externalBreaks, reportedTokens, rollups, sessions as sessionsTable, streams, turns } from './schema.js';

/** Text ordered byte-wise, as SQLite orders it. */
const bytewise = (column: Column | SQL) => sql`${column} COLLATE "C"`;

/** A turn's columns as TurnRow has them: booleans as 0 and 1. */
export const TURN_SELECT = (() => {
  const byName = new Map(Object.values(getTableColumns(turns)).map((c) => [c.name, c]));
  return TURN_COLUMN_NAMES.map((name) => (byName.get(name)?.columnType === 'PgBoolean' ? `t.${name}::int AS ${name}` : `t.${name}`)).join(', ');
})();

type TurnRecordRow = TurnRow & { record: string | null };

export class PgReads {
  private readonly labelId: LabelLookup = (kind, value) => this.names.existingLabel(kind, value);
  private readonly labelValue = (id: number) => this.names.labelValue(id);

  /** `client` reads bigint and numeric as numbers, as openPg's does (./db.ts). */
  constructor(
    private readonly client: SqlPool,
    private readonly names: PgNames,
    private readonly db: PgDrizzle = drizzle({ client: client.pool, schema }),
  ) {}

  /** Finds the labels the filters name, so that labelId knows them (an unknown value stays unknown: it matches nothing). */
  private resolve(filters: Pick<Filters, 'model' | 'provider' | 'agentId'>): Promise<void> {
    const named = (kind: LabelKind, values: string[] = []) => values.map((value): [LabelKind, string] => [kind, value]);
    const unknown = [...named('model', filters.model), ...named('provider', filters.provider), ...named('agent', filters.agentId)].filter(
      ([kind, value]) => this.names.existingLabel(kind, value) === undefined,
    );
    return this.names.findLabels(unknown.map(([kind]) => kind), unknown.map(([, value]) => value));
  }

  /** What reading these turn rows needs: their streams, and the labels and prefixes they name. */
  private async turnNames(rows: readonly TurnRow[]): Promise<TurnNames> {
    const streamIds = [...new Set(rows.flatMap((r) => (r.stream_id === null ? [] : [r.stream_id])))];
    const streamRows = await this.client<{ id: number; project_id: number; session_id: string; agent_id: number }[]>`
      SELECT id, project_id, session_id, agent_id FROM streams WHERE id = ANY(${streamIds}::integer[])`;
    await Promise.all([
      this.names.loadLabels([...streamRows.map((s) => s.agent_id), ...rows.flatMap((r) => [r.snapshot_provider_id, r.usage_provider_id, r.usage_model_id])]),
      this.names.loadPrefixes(rows.map((r) => r.prefix_id)),
    ]);
    const streams = new Map(streamRows.map((s) => [s.id, { projectId: s.project_id, sessionId: s.session_id, agentId: this.names.labelValue(s.agent_id) ?? 'main' }]));
    return this.names.withStreams(streams);
  }

  async breaks(project: string, range: TimeRange, filters: BreakFilters, page: PageQuery, order: BreakOrder = 'recent'): Promise<Page<BreakRecord>> {
    const projectId = await this.names.existingProject(project);
    if (projectId === undefined) return { items: [], nextCursor: null };
    const b = breaksTable;
    await this.resolve(filters);
    const explored = breakPage(b, filters, page, order, (names) =>
      sql`(jsonb_typeof(${b.changedTools}) = 'array' AND EXISTS (SELECT 1 FROM jsonb_array_elements_text(${b.changedTools}) AS tool(value) WHERE tool.value IN ${names}))`,
    );
    const rows = await this.db
      .select({ turnId: b.turnId, ts: b.ts, record: b.record })
      .from(b)
      .where(allOf([...breakConditions(this.labelId, b, projectId, range, filters), ...explored.conditions]))
      .orderBy(...explored.orderBy)
      .limit(page.limit + 1)
      .offset(explored.offset);
    const items = rows.slice(0, page.limit).flatMap((r) => storedBreak(r.record) ?? []);
    return { items, nextCursor: explored.next(rows) };
  }

  async sessions(project: string, range: TimeRange, filters: Filters, page: PageQuery, order: SessionOrder = 'recent'): Promise<Page<SessionSummary>> {
    const projectId = await this.names.existingProject(project);
    if (projectId === undefined) return { items: [], nextCursor: null };
    const { after, offset, next } = sessionPage(page, order);
    const rows = filters.agentId
      ? await this.sessionsOfAgents(projectId, range, filters, page.limit + 1, offset, order, after)
      : await this.wholeSessions(projectId, range, filters, page.limit + 1, offset, order, after);
    await this.names.loadLabels(rows.flatMap((r) => r.agentIds));
    const items = rows.slice(0, page.limit).map((r) => sessionSummaryOf(r, r.agentIds, this.labelValue));
    return { items, nextCursor: next(rows) };
  }

  /** Sessions active in the range, each with the sums of all its streams: one row each, in the order of an index. */
  private async wholeSessions(projectId: number, range: TimeRange, filters: Filters, limit: number, offset: number, order: SessionOrder, after?: [number, string]) {
    const s = sessionsTable;
    const q = wholeSessionsQuery(s, projectId, range, filters, order, after, bytewise);
    const found = await this.db.select(q.selection).from(s).where(q.where).orderBy(...q.ordering).limit(limit).offset(offset);
    if (found.length === 0) return [];
    const agents = new Map(
      (
        await this.db
          .select({ sessionId: streams.sessionId, agentIds: sql<number[]>`array_agg(${streams.agentId})` })
          .from(streams)
          .where(and(eq(streams.projectId, projectId), inArray(streams.sessionId, found.map((r) => r.sessionId)), sql`${streams.lastTs} IS NOT NULL`))
          .groupBy(streams.sessionId)
      ).map((r) => [r.sessionId, r.agentIds]),
    );
    return found.map((r) => ({ ...r, agentIds: agents.get(r.sessionId) ?? [] }));
  }

  /** With an agent filter, a session's figures are those of the chosen agents' streams: grouped from the streams. */
  private async sessionsOfAgents(projectId: number, range: TimeRange, filters: Filters, limit: number, offset: number, order: SessionOrder, after?: [number, string]) {
    const s = streams;
    await this.resolve(filters);
    const agents = labelIds(this.labelId, 'agent', filters.agentId)!;
    const q = agentSessionsQuery(s, projectId, range, filters, agents, order, after, bytewise);
    return this.db
      .select({ ...q.selection, agentIds: sql<number[]>`array_agg(${s.agentId})` })
      .from(s)
      .where(q.where)
      .groupBy(s.sessionId)
      .having(q.having)
      .orderBy(...q.ordering)
      .limit(limit)
      .offset(offset);
  }

  async recentSessionIds(project: string, range: TimeRange, limit: number): Promise<string[]> {
    const projectId = await this.names.existingProject(project);
    if (projectId === undefined || limit <= 0) return [];
    // Streams newest first down the streams_last_ts index, read in small steps (each after the last row of the
    // one before), stopping at `limit` sessions.
    const ids = new Set<string>();
    const step = Math.min(limit, 1000);
    let after: { last_ts: number; id: number } | undefined;
    while (ids.size < limit) {
      const rows = await this.client<{ session_id: string; last_ts: number; id: number }[]>`
        SELECT session_id, last_ts, id FROM streams
        WHERE project_id = ${projectId} AND last_ts >= ${range.from ?? Number.MIN_SAFE_INTEGER} AND first_ts < ${range.to ?? Number.MAX_SAFE_INTEGER}
          AND (last_ts, id) < (${after?.last_ts ?? Number.MAX_SAFE_INTEGER}, ${after?.id ?? 0})
        ORDER BY last_ts DESC, id DESC LIMIT ${step}`;
      for (const row of rows) ids.add(row.session_id);
      if (rows.length < step) break;
      after = rows[rows.length - 1];
    }
    return [...ids].slice(0, limit);
  }

  async changedTools(project: string, range: TimeRange, filters: Filters, limit: number): Promise<ChangedTool[]> {
    const projectId = await this.names.existingProject(project);
    if (projectId === undefined) return [];
    await this.resolve(filters);
    // Per minute from the break rollups; one session's breaks are few enough to read themselves.
    if (filters.sessionId) {
      const b = breaksTable;
      const tool = sql<string>`tool.value`;
      const count = sql<number>`count(*)`;
      const tools = sql`jsonb_array_elements_text(CASE WHEN jsonb_typeof(${b.changedTools}) = 'array' THEN ${b.changedTools} ELSE '[]'::jsonb END) AS tool(value)`;
      return this.db
        .select({ name: tool, breaks: count })
        .from(sql`${b}, ${tools}`)
        .where(allOf(breakConditions(this.labelId, b, projectId, range, filters)))
        .groupBy(tool)
        .orderBy(desc(count), asc(sql`${tool} COLLATE "C"`))
        .limit(limit);
    }
    const r = breakToolRollups;
    const count = sql<number>`sum(${r.breaks})`;
    return this.db
      .select({ name: r.tool, breaks: count })
      .from(r)
      .where(allOf(rollupConditions(this.labelId, r, projectId, range, filters)))
      .groupBy(r.tool)
      .having(sql`sum(${r.breaks}) > 0`)
      .orderBy(desc(count), asc(bytewise(r.tool)))
      .limit(limit);
  }

  async breakPrefixes(project: string, requestId: string): Promise<BreakPrefixes | null> {
    const projectId = await this.names.existingProject(project);
    if (projectId === undefined) return null;
    const turn = async (id: string) =>
      (
        await this.client.unsafe<TurnRecordRow[]>(
          `SELECT ${TURN_SELECT}, b.record FROM turns t LEFT JOIN breaks b ON b.turn_id = t.id
           WHERE t.rid = $1 AND t.project_id = $2 AND t.request_id = $3`,
          [ridOf(id), projectId, id],
        )
      )[0];
    const found = await turn(requestId);
    const record = found?.record ? storedBreak(found.record) : undefined;
    if (!found || !record) return null;
    const baseline = await turn(record.previousRequestId);
    const rows = baseline ? [found, baseline] : [found];
    const names = await this.turnNames(rows);
    const prefixOf = (row: TurnRow | undefined) => (row ? (rowToParts(row, names).snapshot?.prefix ?? null) : null);
    return { break: record, baseline: prefixOf(baseline), turn: prefixOf(found) };
  }

  async sessionTurns(project: string, sessionId: string): Promise<TurnView[] | null> {
    const projectId = await this.names.existingProject(project);
    if (projectId === undefined) return null;
    const ids = (await this.db.select({ id: streams.id }).from(streams).where(and(eq(streams.projectId, projectId), eq(streams.sessionId, sessionId)))).map((r) => r.id);
    if (ids.length === 0) return null;
    const rows = await this.client.unsafe<TurnRecordRow[]>(
      `SELECT ${TURN_SELECT}, b.record FROM turns t
       LEFT JOIN breaks b ON b.turn_id = t.id
       WHERE t.stream_id = ANY($1::integer[]) AND t.ts IS NOT NULL
       ORDER BY t.ts, t.request_id COLLATE "C"`,
      [ids],
    );
    const names = await this.turnNames(rows);
    return turnViewsOf(
      rows.flatMap((row) => {
        const turn = toTurn(rowToParts(row, names));
        return turn ? [{ turn, state: row.state, record: row.record }] : [];
      }),
    );
  }

  async stats(project: string, query: StatsQuery): Promise<StatsRow[]> {
    const projectId = await this.names.existingProject(project);
    if (projectId === undefined) return [];
    await this.resolve(query.filters);
    const r = rollups;
    const minutes = bucketMinutes(query.intervalMs);
    const bucket = bucketOf(r.minute, minutes);
    const groupColumn = groupColumnOf(r, query.groupBy ?? 'model');
    const conditions = rollupConditions(this.labelId, r, projectId, query, query.filters);
    if (query.filters.sessionId) {
      throw new InvalidQueryError('sessionId', 'stats are kept per minute, not per session; use /v1/sessions');
    }
    const grouped = query.groupBy !== undefined;
    const rows = await this.db
      .select({ ts: bucket, group: grouped ? groupColumn : sql<null>`NULL`, ...groupSums(r) })
      .from(r)
      .where(allOf(conditions))
      .groupBy(...(grouped ? [bucket, groupColumn] : [bucket]));
    if (query.groupBy !== undefined && query.groupBy !== 'reason' && query.groupBy !== 'state') await this.names.loadLabels(rows.map((row) => row.group as number));
    const stats = statsRowsOf(rows, query.groupBy, this.labelValue);
    if (withReportedTokens(query)) addReportedTokens(stats, await this.reportedTokens(projectId, query, minutes));
    return stats;
  }

  /** The tokens harnesses reported as metrics, per bucket, model (the group, when grouped by model) and kind. */
  private async reportedTokens(projectId: number, query: StatsQuery, minutes: number) {
    const t = reportedTokens;
    const bucket = bucketOf(t.minute, minutes);
    const models = labelIds(this.labelId, 'model', query.filters.model);
    const rows = await this.db
      .select({ ts: bucket, modelId: t.modelId, kind: t.kind, tokens: sumOf(t.tokens) })
      .from(t)
      .where(allOf([eq(t.projectId, projectId), ...rangeConditions(t.minute, query, 60_000), ...(models ? [inArray(t.modelId, models)] : [])]))
      .groupBy(bucket, t.modelId, t.kind);
    if (query.groupBy === 'model') await this.names.loadLabels(rows.map((row) => row.modelId));
    return rows.map((row) => ({ ...row, group: query.groupBy === 'model' ? (this.labelValue(row.modelId) ?? '') : undefined }));
  }

  async totals(project: string, query: TotalsQuery): Promise<TotalsRow[]> {
    const projectId = await this.names.existingProject(project);
    if (projectId === undefined) return [];
    if (query.filters.sessionId) {
      throw new InvalidQueryError('sessionId', 'totals are kept per minute, not per session; use /v1/sessions');
    }
    await this.resolve(query.filters);
    const r = rollups;
    const groupColumn = query.groupBy ? groupColumnOf(r, query.groupBy) : undefined;
    const rows = await this.db
      .select({ group: groupColumn ?? sql<null>`NULL`, ...groupSums(r) })
      .from(r)
      .where(allOf(rollupConditions(this.labelId, r, projectId, query, query.filters)))
      .groupBy(...(groupColumn ? [groupColumn] : []));
    if (query.groupBy !== undefined && query.groupBy !== 'reason' && query.groupBy !== 'state') await this.names.loadLabels(rows.map((row) => row.group as number));
    return totalsRowsOf(rows, query.groupBy, this.labelValue);
  }

  async gapRows(project: string, range: TimeRange, filters: Filters): Promise<GapRow[]> {
    const projectId = await this.names.existingProject(project);
    if (projectId === undefined) return [];
    await this.resolve(filters);
    return gapRowsOf((await this.db.execute<GapRowsRow>(gapRowsQuery(this.labelId, projectId, range, filters))).rows);
  }

  async lowRateStreams(project: string, range: TimeRange, filters: Filters, minTurns: number, maxRate: number, limit: number): Promise<StreamSums[]> {
    const projectId = await this.names.existingProject(project);
    if (projectId === undefined) return [];
    await this.resolve(filters);
    const query = lowRateStreamsQuery(this.labelId, projectId, range, filters, minTurns, maxRate, limit, bytewise);
    return (await this.db.execute<LowRateRow>(query)).rows.map(streamSumsOf);
  }

  async streamSnapshots(project: string, sessionId: string, agentId: string, limit: number): Promise<StreamSnapshot[]> {
    const projectId = await this.names.existingProject(project);
    if (projectId === undefined) return [];
    const [stream] = await this.client<{ id: number }[]>`
      SELECT s.id FROM streams s JOIN labels a ON a.id = s.agent_id
      WHERE s.project_id = ${projectId} AND s.session_id = ${sessionId} AND a.kind = 'agent' AND a.value = ${agentId}`;
    if (!stream) return [];
    const rows = (await this.db.execute<TurnRow & Record<string, unknown>>(streamSnapshotsQuery(TURN_SELECT, stream.id, limit, bytewise))).rows;
    return streamSnapshotsOf(rows, await this.turnNames(rows));
  }

  async coldTurns(project: string, range: TimeRange, filters: Filters, limit: number): Promise<ColdTurn[]> {
    const projectId = await this.names.existingProject(project);
    if (projectId === undefined) return [];
    await this.resolve(filters);
    return (await this.db.execute<ColdTurnRow>(coldTurnsQuery(this.labelId, projectId, range, filters, limit, bytewise))).rows.map(coldTurnOf);
  }

  async breakCauses(project: string, range: TimeRange, filters: Filters): Promise<BreakCauseRow[]> {
    const projectId = await this.names.existingProject(project);
    if (projectId === undefined) return [];
    await this.resolve(filters);
    if (filters.sessionId) {
      // One session's breaks are few enough to read themselves; summed as the rollups sum them.
      const b = breaksTable;
      const cause = sql<string>`coalesce(${b.cause}, '')`;
      const rows = await this.db
        .select({
          reason: b.reason,
          cause,
          breaks: sql<number>`count(*)`,
          missed: sumOf(b.missed),
          microUsd: sql<number>`coalesce(sum(cachebreak_micro_usd(${b.extraCostUsd})), 0)`,
          unpriced: sql<number>`count(*) FILTER (WHERE ${b.extraCostUsd} IS NULL)`,
        })
        .from(b)
        .where(allOf(breakConditions(this.labelId, b, projectId, range, filters)))
        .groupBy(b.reason, cause);
      return breakCauseRowsOf(rows);
    }
    const r = breakCauseRollups;
    const rows = await this.db
      .select({
        reason: r.reason,
        cause: r.cause,
        breaks: sql<number>`sum(${r.breaks})`,
        missed: sql<number>`sum(${r.missed})`,
        microUsd: sql<number>`sum(${r.extraCostMicroUsd})`,
        unpriced: sql<number>`sum(${r.unpriced})`,
      })
      .from(r)
      .where(allOf(rollupConditions(this.labelId, r, projectId, range, filters)))
      .groupBy(r.reason, r.cause)
      .having(sql`sum(${r.breaks}) > 0`);
    return breakCauseRowsOf(rows);
  }

  async waitingUsage(project?: string): Promise<WaitingUsage[]> {
    // A usage that names no session is stored with no stream: a range of turns_stream_ts, and few rows.
    if (project !== undefined) {
      const projectId = await this.names.existingProject(project);
      if (projectId === undefined) return [{ project, waiting: 0 }];
      const [row] = await this.client<{ waiting: number }[]>`
        SELECT count(*) AS waiting FROM turns WHERE stream_id IS NULL AND project_id = ${projectId}`;
      return [{ project, waiting: row!.waiting }];
    }
    const counts = new Map(
      (await this.client<{ project_id: number; waiting: number }[]>`
        SELECT project_id, count(*) AS waiting FROM turns WHERE stream_id IS NULL GROUP BY project_id`).map((r) => [r.project_id, r.waiting]),
    );
    const projects = await this.client<{ id: number; name: string }[]>`SELECT id, name FROM projects ORDER BY name COLLATE "C"`;
    return projects.map((p) => ({ project: p.name, waiting: counts.get(p.id) ?? 0 }));
  }

  async storedCounts(): Promise<StoredCounts[]> {
    return storedCountsOf(await this.client.unsafe<StoredCountsRow[]>(STORED_COUNTS_SQL));
  }

  async externalBreaks(project: string, range: TimeRange, filters: ExternalBreakFilters, page: PageQuery): Promise<Page<ExternalBreak>> {
    const projectId = await this.names.existingProject(project);
    if (projectId === undefined) return { items: [], nextCursor: null };
    const e = externalBreaks;
    const conditions = externalBreakConditions(e, projectId, range, filters);
    if (page.cursor !== undefined) conditions.push(olderThan(e.ts, e.id, page.cursor));
    const rows = await this.db
      .select()
      .from(e)
      .where(allOf(conditions))
      .orderBy(desc(e.ts), desc(e.id))
      .limit(page.limit + 1);
    return { items: rows.slice(0, page.limit).map(externalBreakOf), nextCursor: nextCursor(rows, page.limit, (last) => [last.ts, last.id]) };
  }
}
