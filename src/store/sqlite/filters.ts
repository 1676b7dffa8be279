// Translates the store's filters into SQL conditions on label ids.
import { and, gte, inArray, lt, sql, type SQL } from 'drizzle-orm';
import type { SQLiteColumn } from 'drizzle-orm/sqlite-core';
import type { Filters, TimeRange } from '../store.js';
import type { Dictionary, LabelKind } from './dictionary.js';

/** Label ids for the values asked for; an unknown value matches nothing (id -1). */
export function labelIds(dictionary: Dictionary, kind: LabelKind, values: string[] | undefined): number[] | undefined {
  if (!values) return undefined;
  return values.map((value) => dictionary.existingLabel(kind, value) ?? -1);
}

export interface LabelColumns {
  model?: SQLiteColumn;
  provider?: SQLiteColumn;
  agent?: SQLiteColumn;
  reason?: SQLiteColumn;
  stream?: SQLiteColumn;
}

export function filterConditions(
  dictionary: Dictionary,
  projectId: number,
  filters: Filters,
  columns: LabelColumns,
): SQL[] {
  const conditions: SQL[] = [];
  const label = (column: SQLiteColumn | undefined, kind: LabelKind, values: string[] | undefined) => {
    const ids = labelIds(dictionary, kind, values);
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

export function rangeConditions(column: SQLiteColumn, range: TimeRange, scale = 1): SQL[] {
  const conditions: SQL[] = [];
  if (range.from !== undefined) conditions.push(gte(column, Math.floor(range.from / scale)));
  if (range.to !== undefined) conditions.push(lt(column, Math.ceil(range.to / scale)));
  return conditions;
}

export function allOf(conditions: SQL[]): SQL | undefined {
  return and(...conditions);
}

/** Opaque pagination cursors: base64url of a JSON tuple. */
export function encodeCursor(values: (string | number)[]): string {
  return Buffer.from(JSON.stringify(values)).toString('base64url');
}

export function decodeCursor(cursor: string, shape: ('string' | 'number')[]): (string | number)[] | undefined {
  try {
    const values = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
    if (!Array.isArray(values) || values.length !== shape.length) return undefined;
    return values.every((v, i) => typeof v === shape[i]) ? (values as (string | number)[]) : undefined;
  } catch {
    return undefined;
  }
}
