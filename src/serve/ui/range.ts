// The time range every view of the web UI shows: a preset (?range=7d) or
// from/to (?from=&to=, RFC 3339 or epoch ms), the last 24 hours by default,
// as GET /v1/stats and GET /v1/breaks/agreement default to. Every link
// carries it, so moving between views keeps the range.
import type { Context } from 'hono';
import { CachebreakError } from '../../errors.js';
import { rangeOf } from '../rest/query.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

export const PRESETS: Record<string, { ms: number | null; label: string }> = {
  '1h': { ms: HOUR, label: 'last hour' },
  '24h': { ms: DAY, label: 'last 24 hours' },
  '7d': { ms: 7 * DAY, label: 'last 7 days' },
  '30d': { ms: 30 * DAY, label: 'last 30 days' },
  all: { ms: null, label: 'all time' },
};
export const DEFAULT_PRESET = '24h';

export interface UiRange {
  /** undefined: no lower bound (all time). */
  from: number | undefined;
  to: number;
  /** The preset's key, or null for a custom from/to. */
  preset: string | null;
  label: string;
  /** The query string that reproduces the range ('' for the default). */
  query: string;
}

export function uiRangeOf(c: Context, now: number): UiRange {
  const from = c.req.query('from');
  const to = c.req.query('to');
  if (from || to) {
    const range = rangeOf(c);
    const query = new URLSearchParams({ ...(from ? { from } : {}), ...(to ? { to } : {}) }).toString();
    return { from: range.from, to: range.to ?? now, preset: null, label: 'custom range', query };
  }
  const key = c.req.query('range') ?? DEFAULT_PRESET;
  const preset = Object.hasOwn(PRESETS, key) ? PRESETS[key] : undefined;
  if (!preset) {
    throw new CachebreakError('bad_request', `range: expected one of ${Object.keys(PRESETS).join(', ')}, got "${key.slice(0, 20)}"`, 'or give from and to');
  }
  return { from: preset.ms === null ? undefined : now - preset.ms, to: now, preset: key, label: preset.label, query: key === DEFAULT_PRESET ? '' : `range=${key}` };
}

/** `path` with the range's query and `params` (values escaped by URLSearchParams; the caller escapes the whole for HTML). */
export function linkTo(path: string, range: UiRange, params: Record<string, string> = {}): string {
  const query = [range.query, new URLSearchParams(params).toString()].filter((q) => q !== '').join('&');
  return query === '' ? path : `${path}?${query}`;
}

const INTERVALS = [60_000, 5 * 60_000, 15 * 60_000, HOUR, 3 * HOUR, 6 * HOUR, DAY, 7 * DAY];

/** The narrowest bucket that keeps a chart of `span` to at most 120 bars. */
export function intervalFor(span: number): number {
  return INTERVALS.find((ms) => span / ms <= 120) ?? INTERVALS[INTERVALS.length - 1]!;
}
