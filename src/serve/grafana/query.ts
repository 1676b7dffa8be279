// A Grafana query: what it takes and how it runs, declared once and served
// to both datasources (Infinity's GET /grafana/<name>, simPod's /query).
import type { PriceLookup } from '../../core/prices.js';
import type { Filters, Store } from '../../store/store.js';
import type { Frame } from './frame.js';
import type { ParamSource } from './params.js';

export interface QueryContext {
  store: Store;
  project: string;
  now: number;
  /** The prices detection uses (the insights' dollar figures); the price database's when absent. */
  prices?: PriceLookup;
}

export interface GrafanaQuery {
  /** The Infinity path under /grafana/ and the simPod metric name. */
  name: string;
  summary: string;
  /** Every parameter it takes, for the docs and simPod's query editor. */
  params: Record<string, Param>;
  run(context: QueryContext, params: ParamSource): Promise<Frame>;
}

export interface Param {
  doc: string;
  /** The values it takes, when they are a closed list. */
  choices?: readonly string[];
  /** A dashboard variable: several values, or All. */
  variable?: boolean;
}

export const RANGE: Record<'from' | 'to', Param> = {
  from: { doc: 'start, inclusive: epoch ms (${__timeFrom}) or RFC 3339; default 24 h before to' },
  to: { doc: 'end, exclusive: epoch ms (${__timeTo}) or RFC 3339; default now' },
};

export const INTERVAL: Record<'interval', Param> = {
  interval: { doc: 'bucket width: ms (${__interval_ms}) or 30s, 1m, 1h…, rounded up to whole minutes (default 1m)' },
};

const variable = (what: string): Param => ({
  doc: `only these ${what}: repeated, a,b or {a,b}; All, $__all, * or empty select everything`,
  variable: true,
});

export const FILTERS: Record<keyof Filters, Param> = {
  model: variable('models'),
  provider: variable('providers'),
  agentId: variable('agents'),
  reason: variable('break reasons'),
  sessionId: variable('sessions'),
};

/** The filter parameters named, for a query's params. */
export function filterDocs(...names: (keyof Filters)[]): Record<string, Param> {
  return Object.fromEntries(names.map((name) => [name, FILTERS[name]]));
}

export const limitDoc = (fallback: number, max: number): Param => ({ doc: `rows, 1–${max} (default ${fallback})` });
