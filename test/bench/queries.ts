// Read latency: p50/p95 of /v1/stats and of each Grafana endpoint over 24
// hours of data, through a real server process, beside the same question
// answered by a plain scan of the turns table on the same file in the same run.
import Database from 'better-sqlite3';
import { percentile, type Row } from './lib.js';
import { startServerProcess } from './server-process.js';
import type { WorkloadOptions } from './workload.js';

const DAY = 86_400_000;
const SAMPLES = 40;

/** Run times in ms of `samples` runs after three warm-up runs. */
export async function timed(samples: number, run: () => void | Promise<void>): Promise<number[]> {
  for (let i = 0; i < 3; i++) await run(); // warm-up
  const out: number[] = [];
  for (let i = 0; i < samples; i++) {
    const t0 = performance.now();
    await run();
    out.push(performance.now() - t0);
  }
  return out;
}

interface Case {
  name: string;
  /** The path after the server's URL, without the range. */
  query: string;
  /** The same question as a plain scan of the turns table, where the endpoint reads rollups or running sums. */
  scan?: string;
}

const IN_RANGE = 'ts >= @from AND ts < @to';
const RATE = 'sum(read) * 1.0 / nullif(sum(uncached) + sum(read) + sum(write), 0)';

function cases(sessionId: string): Case[] {
  return [
    {
      name: '/v1/stats, 1-minute buckets',
      query: '/v1/stats?interval=1m',
      scan: `SELECT ts / 60000 AS m, count(*), sum(uncached), sum(read), sum(write), sum(output), ${RATE} FROM turns WHERE ${IN_RANGE} GROUP BY m`,
    },
    { name: '/grafana/summary', query: '/grafana/summary', scan: `SELECT count(*), sum(uncached), sum(read), sum(write), sum(output), ${RATE} FROM turns WHERE ${IN_RANGE}` },
    { name: '/grafana/cache-rate', query: '/grafana/cache-rate?interval=60000', scan: `SELECT ts / 60000 AS m, ${RATE} FROM turns WHERE ${IN_RANGE} GROUP BY m` },
    {
      name: '/grafana/cache-rate by model',
      query: '/grafana/cache-rate?interval=60000&groupBy=model',
      scan: `SELECT ts / 60000 AS m, usage_model_id, ${RATE} FROM turns WHERE ${IN_RANGE} GROUP BY m, usage_model_id`,
    },
    { name: '/grafana/tokens', query: '/grafana/tokens?interval=60000', scan: `SELECT ts / 60000 AS m, sum(uncached), sum(read), sum(write), sum(output) FROM turns WHERE ${IN_RANGE} GROUP BY m` },
    {
      name: '/grafana/breaks-over-time by reason',
      query: '/grafana/breaks-over-time?interval=60000',
      scan: `SELECT t.ts / 60000 AS m, b.reason, count(*) FROM turns t JOIN breaks b ON b.turn_id = t.id WHERE t.ts >= @from AND t.ts < @to GROUP BY m, b.reason`,
    },
    {
      name: '/grafana/totals by reason',
      query: '/grafana/totals?groupBy=reason',
      scan: `SELECT b.reason, count(*) FROM turns t JOIN breaks b ON b.turn_id = t.id WHERE t.ts >= @from AND t.ts < @to GROUP BY b.reason`,
    },
    {
      name: '/grafana/break-causes',
      query: '/grafana/break-causes',
      scan: `SELECT b.reason, json_extract(b.record, '$.cause') AS cause, count(*), sum(json_extract(b.record, '$.missedCacheReadTokens'))
             FROM turns t JOIN breaks b ON b.turn_id = t.id WHERE t.ts >= @from AND t.ts < @to GROUP BY b.reason, cause`,
    },
    {
      name: '/grafana/breaks (500 rows)',
      query: '/grafana/breaks?limit=500',
      scan: `SELECT b.record FROM turns t JOIN breaks b ON b.turn_id = t.id WHERE t.ts >= @from AND t.ts < @to ORDER BY t.ts DESC LIMIT 500`,
    },
    {
      name: '/grafana/changed-tools',
      query: '/grafana/changed-tools',
      scan: `SELECT tool.value, count(*) AS n FROM turns t JOIN breaks b ON b.turn_id = t.id, json_each(b.record, '$.changedToolNames') AS tool
             WHERE t.ts >= @from AND t.ts < @to GROUP BY tool.value ORDER BY n DESC LIMIT 20`,
    },
    {
      name: '/grafana/sessions by worst cache rate',
      query: '/grafana/sessions?order=worst_cache_rate',
      scan: `SELECT stream_id, ${RATE} AS rate FROM turns WHERE ${IN_RANGE} GROUP BY stream_id ORDER BY rate LIMIT 20`,
    },
    {
      name: '/grafana/sessions by extra cost',
      query: '/grafana/sessions?order=extra_cost',
      scan: `SELECT t.stream_id, sum(json_extract(b.record, '$.estimatedExtraCostUsd')) AS cost FROM turns t LEFT JOIN breaks b ON b.turn_id = t.id
             WHERE t.ts >= @from AND t.ts < @to GROUP BY t.stream_id ORDER BY cost DESC LIMIT 20`,
    },
    { name: '/grafana/turns of one session', query: `/grafana/turns?sessionId=${sessionId}` },
    {
      name: '/grafana/annotations (1,000)',
      query: '/grafana/annotations',
      scan: `SELECT b.record FROM turns t JOIN breaks b ON b.turn_id = t.id WHERE t.ts >= @from AND t.ts < @to ORDER BY t.ts DESC LIMIT 1000`,
    },
    { name: '/grafana/values: models', query: '/grafana/values?dimension=model', scan: `SELECT DISTINCT usage_model_id FROM turns WHERE ${IN_RANGE}` },
    { name: '/grafana/values: sessions', query: '/grafana/values?dimension=sessionId', scan: `SELECT stream_id, max(ts) AS last FROM turns WHERE ${IN_RANGE} GROUP BY stream_id ORDER BY last DESC LIMIT 500` },
  ];
}

/** Answers the cases should give: /v1/stats a bucket per minute, Grafana a non-empty array. */
function check(url: string, status: number, body: unknown): void {
  const ok = Array.isArray(body) ? body.length > 0 : (body as { buckets?: unknown[] }).buckets?.length === DAY / 60_000;
  if (status !== 200 || !ok) throw new Error(`${url}: ${status} ${JSON.stringify(body).slice(0, 200)}`);
}

/** p50 and p95 of every endpoint, measured through a server process on `db` (a file, or a PostgreSQL URL with `extra` flags). */
export async function endpointLatencies(db: string, options: WorkloadOptions, extra: string[] = []): Promise<Map<string, number[]>> {
  const range = { from: options.start, to: options.start + DAY };
  const server = await startServerProcess(db, extra);
  const latencies = new Map<string, number[]>();
  try {
    for (const c of cases('sess_0')) {
      const url = `${server.url}${c.query}${c.query.includes('?') ? '&' : '?'}from=${range.from}&to=${range.to}`;
      latencies.set(
        c.name,
        await timed(SAMPLES, async () => {
          const response = await fetch(url);
          check(url, response.status, await response.json());
        }),
      );
    }
  } finally {
    await server.stop();
  }
  return latencies;
}

/** The figure of an endpoint at a size: `${name}, 24 h, ${millions}M turns`. */
export function endpointFigure(name: string, turns: number): string {
  return `${name}, 24 h, ${(turns / 1e6).toLocaleString('en-US')}M turns`;
}

/**
 * Every read figure on `db`, filled by benchIngest with `options`, from the
 * endpoint latencies measured on it. Every endpoint first, then every scan:
 * a scan can outlast the server's keep-alive timeout, and a closed idle
 * connection would fail the next request.
 */
export async function benchQueries(db: string, options: WorkloadOptions, latencies: Map<string, number[]>): Promise<Row[]> {
  const range = { from: options.start, to: options.start + DAY };
  const rows: Row[] = [];
  const scans = new Database(db, { readonly: true });
  // A scan of 10M turns takes seconds: fewer samples as the table grows.
  const scanSamples = options.turns > 2_000_000 ? 3 : 10;
  try {
    for (const c of cases('sess_0')) {
      const scan = c.scan ? scans.prepare(c.scan) : undefined;
      const baseline = scan ? await timed(scanSamples, () => void scan.all(range)) : undefined;
      const figure = endpointFigure(c.name, options.turns);
      const base = (p: number) => (baseline ? { baseline: { label: `plain scan of turns, p${p}`, value: percentile(baseline, p) } } : {});
      const measured = latencies.get(c.name)!;
      rows.push({ figure: `${figure}: p50`, value: percentile(measured, 50), unit: 'ms', ...base(50) });
      rows.push({ figure: `${figure}: p95`, value: percentile(measured, 95), unit: 'ms', aim: '< 50 ms at 10M', ...base(95) });
    }
  } finally {
    scans.close();
  }
  return rows;
}
