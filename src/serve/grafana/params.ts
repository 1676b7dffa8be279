// Query parameters as Grafana sends them, for both datasources: times in epoch
// ms (Infinity's ${__timeFrom}) or RFC 3339, Grafana's interval forms (30s,
// 1m, 1h, or ms) rounded up to whole minutes, and template variables in every
// shape a multi-value variable takes: repeated, comma-separated, or the
// {a,b} glob; "All" ($__all, All, *, or nothing) is no filter at all.
import { parseDuration } from '../../core/duration.js';
import { CachebreakError } from '../../errors.js';
import type { Filters } from '../../store/store.js';
import { timeParam } from '../rest/query.js';

/** Where a query's parameters come from: a query string or a simPod payload. */
export type ParamSource = (name: string) => string[] | undefined;

const MINUTE = 60_000;
const DAY = 86_400_000;
/** More buckets than a screen has pixels helps no one; wider buckets past this. */
export const MAX_POINTS = 10_080;

const ALL = new Set(['$__all', 'All', 'all', '*']);

export function badParameter(name: string, problem: string, hint: string): CachebreakError {
  return new CachebreakError('bad_request', `${name}: ${problem}`, hint);
}

/** The values of a variable; undefined when it selects everything. */
export function variableValues(raw: string[] | undefined): string[] | undefined {
  const values: string[] = [];
  for (const entry of raw ?? []) {
    const text = entry.trim();
    const glob = /^\{(.*)\}$/s.exec(text);
    for (const part of (glob ? glob[1]! : text).split(',')) {
      const value = part.trim();
      if (ALL.has(value)) return undefined;
      if (value !== '') values.push(value);
    }
  }
  return values.length > 0 ? [...new Set(values)] : undefined;
}

export function single(source: ParamSource, name: string): string | undefined {
  const values = source(name)?.filter((v) => v !== '');
  return values?.[values.length - 1];
}

export interface Range {
  from: number;
  to: number;
}

/** [from, to) in epoch ms; the last 24 hours when absent. */
export function rangeParam(source: ParamSource, now: number): Range {
  const to = timeParam(single(source, 'to'), 'to') ?? now;
  const from = timeParam(single(source, 'from'), 'from') ?? to - DAY;
  if (from >= to) throw badParameter('from', 'must be earlier than to', 'swap from and to');
  return { from, to };
}

/** A bucket width in ms: whole minutes, rounded up, and wide enough for at most MAX_POINTS buckets. */
export function intervalParam(source: ParamSource, range: Range): number {
  const raw = single(source, 'interval');
  let ms = MINUTE;
  if (raw !== undefined) {
    const parsed = /^\d+$/.test(raw) ? Number(raw) : parseDuration(raw);
    if (parsed === undefined || !Number.isSafeInteger(parsed) || parsed <= 0) {
      throw badParameter('interval', `expected a duration such as 30s, 1m, 1h or milliseconds, got "${raw.slice(0, 20)}"`, 'pass Grafana\'s ${__interval_ms} or $__interval');
    }
    ms = parsed;
  }
  const fewest = (range.to - range.from) / MAX_POINTS;
  return Math.ceil(Math.max(ms, fewest, MINUTE) / MINUTE) * MINUTE;
}

/**
 * The dashboard variables a query honours. A variable it cannot honour is
 * refused unless it selects everything, so a panel never shows unfiltered
 * data under a filter.
 */
export function filtersParam(source: ParamSource, allowed: readonly (keyof Filters)[]): Filters {
  const filters: Filters = {};
  for (const name of ['model', 'provider', 'agentId', 'reason', 'sessionId'] as const) {
    const values = variableValues(source(name));
    if (!values) continue;
    if (!allowed.includes(name)) {
      throw badParameter(name, `this query cannot be filtered by ${name}`, allowed.length ? `it takes ${allowed.join(', ')}` : 'it takes no filters');
    }
    filters[name] = values;
  }
  return filters;
}

export function limitParam(source: ParamSource, fallback: number, max: number): number {
  const raw = single(source, 'limit');
  if (raw === undefined) return fallback;
  const limit = Number(raw);
  if (!Number.isInteger(limit) || limit < 1 || limit > max) {
    throw badParameter('limit', `expected a whole number from 1 to ${max}, got "${raw.slice(0, 20)}"`, `e.g. limit=${fallback}`);
  }
  return limit;
}

export function choiceParam<T extends string>(source: ParamSource, name: string, choices: readonly T[], fallback: T): T {
  const raw = single(source, name);
  if (raw === undefined) return fallback;
  if (!choices.includes(raw as T)) {
    throw badParameter(name, `expected one of ${choices.join(', ')}, got "${raw.slice(0, 40)}"`, `e.g. ${name}=${fallback}`);
  }
  return raw as T;
}
