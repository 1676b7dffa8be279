// Translates the store's filters, ranges and cursors into SQL conditions and
// back, for every backend: drizzle's conditions are the same in each dialect.
import { and, desc, eq, gte, inArray, isNull, lt, or, sql, type Column, type SQL } from 'drizzle-orm';
import type { LabelKind } from './evaluate/names.js';
import { InvalidQueryError, type BreakFilters, type BreakOrder, type ExternalBreakFilters, type Filters, type PageQuery, type TimeRange } from './store.js';

export type { LabelKind };

/** The id of a stored label, undefined when the value was never stored. */
export type LabelLookup = (kind: LabelKind, value: string) => number | undefined;

/** Label ids for the values asked for; an unknown value matches nothing (id -1). */
export function labelIds(lookup: LabelLookup, kind: LabelKind, values: string[] | undefined): number[] | undefined {
  if (!values) return undefined;
  return values.map((value) => lookup(kind, value) ?? -1);
}

export interface LabelColumns {
  model?: Column;
  provider?: Column;
  agent?: Column;
  reason?: Column;
  stream?: Column;
}

export function filterConditions(lookup: LabelLookup, projectId: number, filters: Filters, columns: LabelColumns): SQL[] {
  const conditions: SQL[] = [];
  const label = (column: Column | undefined, kind: LabelKind, values: string[] | undefined) => {
    const ids = labelIds(lookup, kind, values);
    if (column && ids) conditions.push(inArray(column, ids));
  };
  label(columns.model, 'model', filters.model);
  label(columns.provider, 'provider', filters.provider);
  label(columns.agent, 'agent', filters.agentId);
  if (columns.reason && filters.reason) conditions.push(inArray(columns.reason, filters.reason));
  if (columns.stream && filters.sessionId) {
    conditions.push(
      sql`${columns.stream} IN (SELECT id FROM streams WHERE project_id = ${projectId} AND session_id IN ${filters.sessionId})`,
    );
  }
  return conditions;
}

export function rangeConditions(column: Column, range: TimeRange, scale = 1): SQL[] {
  const conditions: SQL[] = [];
  if (range.from !== undefined) conditions.push(gte(column, Math.floor(range.from / scale)));
  if (range.to !== undefined) conditions.push(lt(column, Math.ceil(range.to / scale)));
  return conditions;
}

/** The columns of a per-minute rollup that reads filter on. */
export interface RollupColumns {
  projectId: Column;
  minute: Column;
  modelId: Column;
  providerId: Column;
  agentId: Column;
  reason: Column;
}

/** A project's rollup rows in the range that match the filters (all but sessionId, which rollups do not keep). */
export function rollupConditions(lookup: LabelLookup, r: RollupColumns, projectId: number, range: TimeRange, filters: Filters): SQL[] {
  return [
    eq(r.projectId, projectId),
    ...rangeConditions(r.minute, range, 60_000),
    ...filterConditions(lookup, projectId, filters, { model: r.modelId, provider: r.providerId, agent: r.agentId, reason: r.reason }),
  ];
}

/** The columns of the breaks table that reads filter on. */
export interface BreakColumns {
  projectId: Column;
  streamId: Column;
  ts: Column;
  modelId: Column;
  providerId: Column;
  agentId: Column;
  reason: Column;
}

/** A project's breaks in the range that match the filters; `project` overrides how the project is matched. */
export function breakConditions(lookup: LabelLookup, b: BreakColumns, projectId: number, range: TimeRange, filters: Filters, project: SQL = eq(b.projectId, projectId)): SQL[] {
  return [
    project,
    ...rangeConditions(b.ts, range),
    ...filterConditions(lookup, projectId, filters, { model: b.modelId, provider: b.providerId, agent: b.agentId, reason: b.reason, stream: b.streamId }),
  ];
}

/**
 * A page of breaks in an order: the conditions on cause and changed tools
 * beside breakConditions', the order, and the cursors (newest first: after a
 * (ts, id); by extra cost: an offset). `toolNamed` is the backend's test that
 * changedToolNames names one of the tools.
 */
export function breakPage(
  b: { ts: Column; turnId: Column; cause: Column; extraCostUsd: Column },
  filters: BreakFilters,
  page: PageQuery,
  order: BreakOrder,
  toolNamed: (names: string[]) => SQL,
) {
  const conditions: SQL[] = [];
  if (filters.cause) {
    const named = filters.cause.filter((c) => c !== 'none');
    const parts = [...(named.length > 0 ? [inArray(b.cause, named)] : []), ...(named.length < filters.cause.length ? [isNull(b.cause)] : [])];
    conditions.push(or(...parts)!);
  }
  if (filters.toolName) conditions.push(toolNamed(filters.toolName));
  const offset = page.cursor !== undefined && order === 'extra_cost' ? (cursorValues(page.cursor, ['number'])[0] as number) : 0;
  if (!Number.isSafeInteger(offset) || offset < 0) throw new InvalidQueryError('cursor', 'not a cursor this server issued; pass nextCursor unchanged');
  if (page.cursor !== undefined && order === 'recent') conditions.push(olderThan(b.ts, b.turnId, page.cursor));
  const orderBy = order === 'extra_cost' ? [sql`${b.extraCostUsd} DESC NULLS LAST`, desc(b.ts), desc(b.turnId)] : [desc(b.ts), desc(b.turnId)];
  const next = <R extends { ts: number; turnId: number }>(rows: readonly R[]) =>
    nextCursor(rows, page.limit, (last) => (order === 'recent' ? [last.ts, last.turnId] : [offset + page.limit]));
  return { conditions, orderBy, offset, next };
}

/** A project's harness-reported breaks in the range that match the filters. */
export function externalBreakConditions(
  e: { projectId: Column; ts: Column; sessionId: Column; agentId: Column },
  projectId: number,
  range: TimeRange,
  filters: ExternalBreakFilters,
): SQL[] {
  const conditions = [eq(e.projectId, projectId), ...rangeConditions(e.ts, range)];
  if (filters.sessionId) conditions.push(inArray(e.sessionId, filters.sessionId));
  if (filters.agentId) conditions.push(inArray(e.agentId, filters.agentId));
  return conditions;
}

/** Rows after a (ts, id) cursor, in the order newest first, ties by id downwards. */
export function olderThan(ts: Column, id: Column, cursor: string): SQL {
  const [t, i] = cursorValues(cursor, ['number', 'number']) as [number, number];
  return or(lt(ts, t), and(eq(ts, t), lt(id, i)))!;
}

/** The cursor to what follows a page, read with one row more than its limit; null at the end. */
export function nextCursor<R>(rows: readonly R[], limit: number, key: (last: R) => (string | number)[]): string | null {
  const last = rows[limit - 1];
  return rows.length > limit && last !== undefined ? encodeCursor(key(last)) : null;
}

export function allOf(conditions: SQL[]): SQL | undefined {
  return and(...conditions);
}

/** Opaque pagination cursors: base64url of a JSON tuple. */
export function encodeCursor(values: (string | number)[]): string {
  return Buffer.from(JSON.stringify(values)).toString('base64url');
}

function decodeCursor(cursor: string, shape: ('string' | 'number')[]): (string | number)[] | undefined {
  try {
    const values = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
    if (!Array.isArray(values) || values.length !== shape.length) return undefined;
    return values.every((v, i) => typeof v === shape[i]) ? (values as (string | number)[]) : undefined;
  } catch {
    return undefined;
  }
}

/** A cursor's values, or the caller's mistake when it is not one this server issued. */
export function cursorValues(cursor: string, shape: ('string' | 'number')[]): (string | number)[] {
  const values = decodeCursor(cursor, shape);
  if (!values) throw new InvalidQueryError('cursor', 'not a cursor this server issued; pass nextCursor unchanged');
  return values;
}
