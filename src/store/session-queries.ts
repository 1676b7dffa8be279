// The parts of the session rankings every backend runs: which rows, in which
// order, with which sums. A backend adds how its dialect compares text (byte-
// wise, as SQLite does), aggregates agent ids, and steers its planner.
import { and, asc, desc, eq, gte, inArray, lt, sql, type Column, type SQL } from 'drizzle-orm';
import { cursorValues, nextCursor } from './filters.js';
import { groupSums, ownSums, type SummedColumns } from './sum-columns.js';
import type { Filters, PageQuery, SessionOrder, TimeRange } from './store.js';

/**
 * Where a page of sessions starts, and the cursor to the next one: recent
 * order pages by key (the last session's time and id), the rankings by position.
 */
export function sessionPage(page: PageQuery, order: SessionOrder) {
  const after = page.cursor !== undefined && order === 'recent' ? (cursorValues(page.cursor, ['number', 'string']) as [number, string]) : undefined;
  const offset = page.cursor !== undefined && order !== 'recent' ? (cursorValues(page.cursor, ['number'])[0] as number) : 0;
  const next = (rows: readonly { lastSeen: number; sessionId: string }[]) =>
    nextCursor(rows, page.limit, (last) => (order === 'recent' ? [last.lastSeen, last.sessionId] : [offset + page.limit]));
  return { after, offset, next };
}

/** A session id as the backend orders and compares it: byte-wise, whatever the database's collation. */
export type SessionIdOrder = (column: Column) => SQL | Column;

interface SessionColumns extends SummedColumns {
  projectId: Column;
  sessionId: Column;
  firstTs: Column;
  lastTs: Column;
}

/**
 * Sessions active in the range from the sessions table, each with the sums
 * of all its streams, in the order of the ranking's index. `lastTs` is how
 * the range reads last_ts (SQLite keeps its planner on the ranking's index
 * with a unary +).
 */
export function wholeSessionsQuery(
  s: SessionColumns & { rateRank: Column },
  projectId: number,
  range: TimeRange,
  filters: Filters,
  order: SessionOrder,
  after: [number, string] | undefined,
  id: SessionIdOrder,
  lastTs: SQL = sql`${s.lastTs}`,
) {
  const conditions: SQL[] = [eq(s.projectId, projectId), sql`${lastTs} IS NOT NULL`];
  if (range.from !== undefined) conditions.push(sql`${lastTs} >= ${range.from}`);
  if (range.to !== undefined) conditions.push(lt(s.firstTs, range.to));
  if (filters.sessionId) conditions.push(inArray(s.sessionId, filters.sessionId));
  if (after) conditions.push(sql`(${s.lastTs} < ${after[0]} OR (${s.lastTs} = ${after[0]} AND ${id(s.sessionId)} < ${after[1]}))`);
  const ordering = {
    recent: [desc(s.lastTs), desc(id(s.sessionId))],
    worst_cache_rate: [asc(s.rateRank), asc(id(s.sessionId))],
    // NULLS LAST: as the cost indexes order (SQLite's DESC puts nulls last; PostgreSQL's is declared so), though costs are never null.
    extra_cost: [sql`${s.extraCostMicroUsd} DESC NULLS LAST`, asc(id(s.sessionId))],
  }[order];
  const selection = { sessionId: sql<string>`${s.sessionId}`, firstSeen: sql<number>`${s.firstTs}`, lastSeen: sql<number>`${s.lastTs}`, ...ownSums(s) };
  return { where: and(...conditions), ordering, selection };
}

/**
 * With an agent filter, a session's figures are those of the chosen agents'
 * streams (`agents`: their label ids), grouped from the streams; `agentIds`
 * is the backend's aggregate of a group's agent ids.
 */
export function agentSessionsQuery(
  s: SessionColumns & { agentId: Column },
  projectId: number,
  range: TimeRange,
  filters: Filters,
  agents: number[],
  order: SessionOrder,
  after: [number, string] | undefined,
  id: SessionIdOrder,
) {
  // A stream whose only turns moved to another agent's stream has no span left.
  const conditions: SQL[] = [eq(s.projectId, projectId), sql`${s.lastTs} IS NOT NULL`, inArray(s.agentId, agents)];
  if (range.from !== undefined) conditions.push(gte(s.lastTs, range.from));
  if (range.to !== undefined) conditions.push(lt(s.firstTs, range.to));
  if (filters.sessionId) conditions.push(inArray(s.sessionId, filters.sessionId));
  const lastSeen = sql<number>`max(${s.lastTs})`;
  const having: SQL[] = [sql`${lastSeen} IS NOT NULL`];
  if (after) having.push(sql`(${lastSeen} < ${after[0]} OR (${lastSeen} = ${after[0]} AND ${id(s.sessionId)} < ${after[1]}))`);
  const rate = sql`CAST(sum(${s.read}) AS DOUBLE PRECISION) / nullif(sum(${s.uncached}) + sum(${s.read}) + sum(${s.write}), 0)`;
  const ordering = {
    recent: [desc(lastSeen), desc(id(s.sessionId))],
    worst_cache_rate: [sql`${rate} IS NULL`, sql`${rate} ASC`, asc(id(s.sessionId))],
    extra_cost: [sql`sum(${s.extraCostMicroUsd}) DESC`, asc(id(s.sessionId))],
  }[order];
  const selection = { sessionId: sql<string>`${s.sessionId}`, firstSeen: sql<number>`min(${s.firstTs})`, lastSeen, ...groupSums(s) };
  return { where: and(...conditions), having: and(...having), ordering, selection };
}
