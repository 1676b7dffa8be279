// Query-string parsing shared by the read routes: times (RFC 3339 or epoch
// ms), multi-value filters, page sizes. Every mistake is a 400 naming the
// parameter and what it accepts.
import type { Context } from 'hono';
import { CachebreakError } from '../../errors.js';
import type { Filters, PageQuery, TimeRange } from '../../store/store.js';
import { parseDuration } from '../../core/duration.js';
import { parseTime, QUERY_TIMES, TIME_FORMS, timeProblem } from '../../time.js';

function badParameter(name: string, problem: string, hint: string): CachebreakError {
  return new CachebreakError('bad_request', `${name}: ${problem}`, hint);
}

/** A query-string time; absent or empty is undefined. */
export function timeParam(raw: string | undefined, name: string): number | undefined {
  if (raw === undefined || raw === '') return undefined;
  const ms = parseTime(raw);
  if (ms === undefined) {
    throw badParameter(name, `expected ${TIME_FORMS}, got "${raw.slice(0, 40)}"`, `e.g. ${name}=2026-11-30T00:00:00Z or ${name}=1796000000000`);
  }
  const problem = timeProblem(ms, QUERY_TIMES);
  if (problem !== undefined) throw badParameter(name, `${problem}, got "${raw.slice(0, 40)}"`, 'leave it out for no bound');
  return ms;
}

export function rangeOf(c: Context, defaults: TimeRange = {}): TimeRange {
  const range: TimeRange = {
    from: timeParam(c.req.query('from'), 'from') ?? defaults.from,
    to: timeParam(c.req.query('to'), 'to') ?? defaults.to,
  };
  if (range.from !== undefined && range.to !== undefined && range.from >= range.to) {
    throw badParameter('from', 'must be earlier than to', 'swap from and to');
  }
  return range;
}

/** Repeated (`?model=a&model=b`) or comma-separated values. */
export function listParam(c: Context, name: string): string[] | undefined {
  const values = (c.req.queries(name) ?? []).flatMap((v) => v.split(',')).map((v) => v.trim()).filter((v) => v !== '');
  return values.length > 0 ? values : undefined;
}

export const FILTER_PARAMS = ['sessionId', 'agentId', 'model', 'provider', 'reason'] as const;

export function filtersOf(c: Context, allowed: readonly (keyof Filters)[] = FILTER_PARAMS): Filters {
  const filters: Filters = {};
  for (const name of allowed) {
    const values = listParam(c, name);
    if (values) filters[name] = values;
  }
  return filters;
}

export function pageOf(c: Context, defaultLimit = 100, maxLimit = 1000): PageQuery {
  const raw = c.req.query('limit');
  const limit = raw === undefined ? defaultLimit : Number(raw);
  if (!Number.isInteger(limit) || limit < 1 || limit > maxLimit) {
    throw badParameter('limit', `expected a whole number from 1 to ${maxLimit}, got "${raw}"`, `e.g. limit=${defaultLimit}`);
  }
  const cursor = c.req.query('cursor');
  return cursor ? { limit, cursor } : { limit };
}

/** "1m", "15m", "1h", "1d" or milliseconds; a whole number of minutes. */
export function parseInterval(raw: string | undefined, name: string, fallback: number): number {
  if (raw === undefined || raw === '') return fallback;
  const ms = /^\d+$/.test(raw) ? Number(raw) : parseDuration(raw);
  if (ms === undefined || ms < 60_000 || ms % 60_000 !== 0) {
    throw badParameter(name, `expected a whole number of minutes such as 1m, 15m, 1h or 1d, got "${raw.slice(0, 20)}"`, 'data is kept per minute');
  }
  return ms;
}
