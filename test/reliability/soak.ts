// Soak: sustained batched ingest into a real server while the four dashboards
// of dashboards/ refresh every second, each asking what it asks Grafana for:
// the three Infinity dashboards their variable, panel and annotation URLs
// from the committed JSON (macros and variables interpolated as Grafana
// does), the Prometheus dashboard a scrape of /metrics. Measures throughput,
// ingest and dashboard latency, and the server's memory over time (which
// must stop growing after warm-up).
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { percentile } from '../bench/lib.js';
import { benchBatch, type WorkloadOptions } from '../bench/workload.js';
import { postEvents, spawnServer } from '../e2e/process.js';
import { infinityTargets, interpolate, INFINITY_TYPE, type InfinityUse } from '../grafana/infinity-targets.js';

export interface SoakOptions {
  dir: string;
  minutes: number;
  /** Events per second the ingest clients aim for. */
  rate: number;
}

export interface DashboardFigures {
  /** The dashboard's file in dashboards/. */
  file: string;
  /** Completed refreshes: every query of the dashboard answered. */
  refreshes: number;
  requests: number;
  requestP95Ms: number;
  /** A whole refresh: variables, then every panel and annotation query. */
  refreshP95Ms: number;
}

export interface SoakReport {
  turns: number;
  turnsPerSecond: number;
  ingestP50Ms: number;
  ingestP99Ms: number;
  dashboardP95Ms: number;
  dashboardRequests: number;
  dashboards: DashboardFigures[];
  /** Dashboard answers that were not a 200 with what the query reads (first few), and how many in all. */
  dashboardErrors: string[];
  dashboardErrorCount: number;
  /** Scrapes after the first ingest without every metric the Prometheus dashboard queries. */
  incompleteScrapes: number;
  /** [seconds since start, RSS in MiB, database and WAL files in MiB] every few seconds. */
  rss: [number, number, number][];
  /**
   * What the server keeps at the end (its lowest RSS over the last
   * FLOOR_SECONDS: a peak before a collection is not kept), less what SQLite's
   * page caches may hold of what the database grew by after warm-up, over the
   * largest RSS during warm-up (the first third, at least WARMUP_MS), minus 1.
   */
  growthAfterWarmup: number;
}

const BATCH = 500;

/**
 * The shortest warm-up: the main thread's and the reader thread's heaps each
 * grow until their first full collection, which at 1,000 turns/s comes about
 * 30 s in; what matters is that memory stops growing after that.
 */
const WARMUP_MS = 30_000;

/** The end of the run over which the lowest RSS is what the server keeps. */
const FLOOR_SECONDS = 10;

/**
 * The page caches of the server's SQLite connections, in MiB (src/store/db.ts:
 * the writer's, the reader's): each may hold up to that much of what the
 * database grows by, which is memory that stops growing at these sizes.
 */
const PAGE_CACHES_MIB = [64, 16];

/** The dashboards' time range (now-24h to now), at 1-minute resolution: what Grafana's $__interval is for 24 h on a wide screen. */
const RANGE_MS = 86_400_000;
const INTERVAL_MS = 60_000;

/** Requests a browser keeps in flight to one host: Grafana's panels wait beyond that. */
const IN_FLIGHT = 6;

type Json = Record<string, any>;

const DASHBOARDS_DIR = new URL('../../dashboards/', import.meta.url);
export const DASHBOARD_FILES = ['cachebreak-overview.json', 'cachebreak-breaks.json', 'cachebreak-session.json', 'cachebreak-prometheus.json'] as const;

function rssMiB(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) / 1024 : NaN;
}

/** The database file and its WAL, in MiB. */
function databaseMiB(path: string): number {
  const size = (file: string) => {
    try {
      return statSync(file).size;
    } catch {
      return 0;
    }
  };
  return Math.round((size(path) + size(`${path}-wal`)) / 1_048_576);
}

/** Runs `tasks` with at most `limit` at a time. */
async function pooled(tasks: (() => Promise<void>)[], limit: number): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(limit, tasks.length) }, async () => {
    while (next < tasks.length) await tasks[next++]!();
  }));
}

/** What one refresh of a dashboard asks for, given the time of the refresh. */
interface Dashboard {
  file: string;
  /** Resolves to whether the panels were asked (false: only the variables, nothing to show yet). */
  refresh(now: number, get: (path: string) => Promise<unknown>): Promise<boolean>;
}

/**
 * An Infinity dashboard as Grafana refreshes it: its query variables first
 * (all are "refresh on time range change", and an auto-refresh of a relative
 * range is one), then every panel target and annotation with the variables'
 * values. A variable with "All" stays at its allValue; one without keeps its
 * value while the list still holds it, else takes the first listed, as
 * Grafana does. Until a variable without "All" lists anything, nothing but
 * the variables is asked (the dashboard has nothing to show yet).
 */
function infinityDashboard(file: string, json: Json): Dashboard {
  const uses: InfinityUse[] = infinityTargets(json);
  const variables = (json.templating?.list ?? []) as Json[];
  const queries = uses.filter((u) => !u.where.startsWith('variable '));
  if (queries.length === 0) throw new Error(`${file}: no Infinity panel or annotation targets`);
  const current: Record<string, string | string[]> = {};
  for (const v of variables) {
    if (v.datasource?.type !== INFINITY_TYPE) throw new Error(`${file}: variable ${v.name} is not an Infinity query; not modelled here`);
    if (v.includeAll) current[v.name] = v.allValue;
  }
  return {
    file,
    async refresh(now, get) {
      const at = { from: now - RANGE_MS, to: now, intervalMs: INTERVAL_MS };
      await pooled(
        variables.map((v) => async () => {
          const rows = (await get(interpolate(v.query.infinityQuery.url, { ...at, variables: {} }))) as { value: string }[];
          if (v.includeAll) return;
          const values = rows.map((row) => row.value);
          const kept = current[v.name];
          if (typeof kept === 'string' && values.includes(kept)) return;
          if (values.length > 0) current[v.name] = values[0]!;
          else delete current[v.name];
        }),
        IN_FLIGHT,
      );
      if (variables.some((v) => current[v.name] === undefined)) return false;
      await pooled(queries.map(({ target }) => async () => void (await get(interpolate(target.url, { ...at, variables: current })))), IN_FLIGHT);
      return true;
    },
  };
}

/** The metric names a Prometheus dashboard's queries (panels, variables, annotations) read. */
function prometheusMetrics(json: Json): string[] {
  const names = new Set<string>();
  for (const [, name] of JSON.stringify(json).matchAll(/\b(cachebreak_[a-z_]+)\b/g)) names.add(name!);
  return [...names].sort();
}

/** The soak's four dashboards, from the committed JSON. */
function dashboards(): { infinity: Dashboard[]; prometheus: { file: string; metrics: string[] } } {
  const load = (file: string) => JSON.parse(readFileSync(new URL(file, DASHBOARDS_DIR), 'utf8')) as Json;
  const [overview, breaks, session, prometheus] = DASHBOARD_FILES;
  const metrics = prometheusMetrics(load(prometheus));
  if (metrics.length < 5) throw new Error(`${prometheus}: found only ${metrics.join(', ')}`);
  return { infinity: [overview, breaks, session].map((file) => infinityDashboard(file, load(file))), prometheus: { file: prometheus, metrics } };
}

export async function soak(options: SoakOptions): Promise<SoakReport> {
  const { infinity, prometheus } = dashboards();
  const dbPath = join(options.dir, 'soak.db');
  const server = await spawnServer(dbPath);
  const durationMs = options.minutes * 60_000;
  const start = Date.now();
  const workload: WorkloadOptions = { turns: Math.ceil((options.rate * durationMs) / 1000) + BATCH, start: start - 3_600_000, spanMs: durationMs + 3_600_000, concurrency: 64 };
  const ingestMs: number[] = [];
  const rss: [number, number, number][] = [];
  const errors: string[] = [];
  let errorCount = 0;
  let incompleteScrapes = 0;
  let firstIngestAt: number | undefined;
  let sent = 0;
  const done = () => Date.now() - start >= durationMs;
  const fail = (message: string) => {
    errorCount++;
    if (errors.length < 10) errors.push(message.slice(0, 300));
  };

  const ingest = async () => {
    while (!done()) {
      const due = start + (sent / options.rate) * 1000;
      if (Date.now() < due) await new Promise((r) => setTimeout(r, due - Date.now()));
      const events = benchBatch(sent, BATCH, workload);
      sent += BATCH;
      const t0 = performance.now();
      const reply = await postEvents(server.url, events);
      ingestMs.push(performance.now() - t0);
      if (reply.status !== 200) throw new Error(`ingest answered ${reply.status}: ${reply.text.slice(0, 200)}`);
      firstIngestAt ??= Date.now();
    }
  };

  /** Refreshes a dashboard every second (a refresh slower than that delays the next, as in Grafana). */
  const every = async (figures: DashboardFigures, requestMs: number[], refreshMs: number[], refresh: (now: number) => Promise<boolean>) => {
    while (!done()) {
      const tick = Date.now();
      const t0 = performance.now();
      if (await refresh(tick)) {
        refreshMs.push(performance.now() - t0);
        figures.refreshes++;
      }
      figures.requests = requestMs.length;
      await new Promise((r) => setTimeout(r, Math.max(0, 1000 - (Date.now() - tick))));
    }
  };

  const allRequestMs: number[] = [];
  const figures: DashboardFigures[] = [];
  const loops: Promise<void>[] = [];
  const timed = (requestMs: number[]) => async (path: string, read: (response: Response) => Promise<unknown>) => {
    const t0 = performance.now();
    const response = await fetch(`${server.url}${path}`);
    const body = await read(response);
    const ms = performance.now() - t0;
    requestMs.push(ms);
    allRequestMs.push(ms);
    return { response, body };
  };

  for (const dashboard of infinity) {
    const requestMs: number[] = [];
    const refreshMs: number[] = [];
    const f: DashboardFigures = { file: dashboard.file, refreshes: 0, requests: 0, requestP95Ms: 0, refreshP95Ms: 0 };
    figures.push(f);
    const get = timed(requestMs);
    loops.push(
      every(f, requestMs, refreshMs, async (now) => {
        let complete = true;
        const panelsAsked = await dashboard.refresh(now, async (path) => {
          const { response, body } = await get(path, (r) => r.text());
          let rows: unknown;
          try {
            rows = JSON.parse(body as string);
          } catch {
            rows = undefined;
          }
          // Every Infinity target reads an array of rows (root_selector is empty in every dashboard here).
          if (response.status !== 200 || !Array.isArray(rows)) {
            complete = false;
            fail(`${dashboard.file}: GET ${path} → ${response.status} ${String(body).slice(0, 200)}`);
            return [];
          }
          return rows;
        });
        // A refresh that only listed variables (nothing to show yet) is not counted as one.
        return complete && panelsAsked;
      }).then(() => {
        f.requestP95Ms = requestMs.length > 0 ? percentile(requestMs, 95) : NaN;
        f.refreshP95Ms = refreshMs.length > 0 ? percentile(refreshMs, 95) : NaN;
      }),
    );
  }

  {
    const requestMs: number[] = [];
    const refreshMs: number[] = [];
    const f: DashboardFigures = { file: prometheus.file, refreshes: 0, requests: 0, requestP95Ms: 0, refreshP95Ms: 0 };
    figures.push(f);
    const get = timed(requestMs);
    loops.push(
      every(f, requestMs, refreshMs, async (now) => {
        const { response, body } = await get('/metrics', (r) => r.text());
        const text = body as string;
        if (response.status !== 200 || !String(response.headers.get('content-type')).startsWith('text/plain')) {
          fail(`${prometheus.file}: GET /metrics → ${response.status} ${text.slice(0, 200)}`);
          return false;
        }
        // Once turns (and breaks) have been stored, every metric the dashboard queries has samples.
        if (firstIngestAt !== undefined && now - firstIngestAt > 10_000) {
          const missing = prometheus.metrics.filter((name) => !new RegExp(`^${name}(\\{| )`, 'm').test(text));
          if (missing.length > 0) {
            incompleteScrapes++;
            fail(`${prometheus.file}: GET /metrics has no samples of ${missing.join(', ')}`);
          }
        }
        return true;
      }).then(() => {
        f.requestP95Ms = requestMs.length > 0 ? percentile(requestMs, 95) : NaN;
        f.refreshP95Ms = refreshMs.length > 0 ? percentile(refreshMs, 95) : NaN;
      }),
    );
  }

  const sampler = async () => {
    while (!done()) {
      rss.push([Math.round((Date.now() - start) / 1000), Math.round(rssMiB(server.pid)), databaseMiB(dbPath)]);
      await new Promise((r) => setTimeout(r, 2_000));
    }
  };
  try {
    await Promise.all([ingest(), ingest(), ...loops, sampler()]);
  } finally {
    await server.stop();
  }
  const warmupSeconds = Math.max(durationMs / 3, WARMUP_MS) / 1000;
  const warmup = rss.filter(([s]) => s <= warmupSeconds);
  const after = rss.filter(([s]) => s > warmupSeconds);
  const warm = Math.max(...warmup.map(([, m]) => m));
  const end = rss.at(-1)![0];
  const kept = Math.min(...after.filter(([s]) => s >= end - FLOOR_SECONDS).map(([, m]) => m));
  const dbGrowth = Math.max(0, rss.at(-1)![2] - warmup.at(-1)![2]);
  const cached = PAGE_CACHES_MIB.reduce((sum, size) => sum + Math.min(size, dbGrowth), 0);
  return {
    turns: sent,
    turnsPerSecond: sent / ((Date.now() - start) / 1000),
    ingestP50Ms: percentile(ingestMs, 50),
    ingestP99Ms: percentile(ingestMs, 99),
    dashboardP95Ms: percentile(allRequestMs, 95),
    dashboardRequests: allRequestMs.length,
    dashboards: figures,
    dashboardErrors: errors,
    dashboardErrorCount: errorCount,
    incompleteScrapes,
    rss,
    growthAfterWarmup: (kept - cached) / warm - 1,
  };
}
