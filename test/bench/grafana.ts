// Grafana endpoint latency: p50/p95 of each dashboard query over 24 hours of
// `turns` turns, through a real server process, beside the same question
// answered by a plain scan of the turns table on the same file in the same run.
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_DETECTION } from '../../src/core/options.js';
import type { CacheEvent } from '../../src/core/types.js';
import { toCacheEvent } from '../../src/ingest/http/events.js';
import { SqliteStore } from '../../src/store/sqlite/store.js';
import { percentile, type Row } from './lib.js';
import { startServerProcess } from './server-process.js';
import { benchBatch, type WorkloadOptions } from './workload.js';

const DAY = 86_400_000;
const BATCH = 10_000;
const SAMPLES = 40;

/** Fills the database through the store itself: the same rows as HTTP ingest, without the HTTP. */
async function fill(db: string, options: WorkloadOptions): Promise<void> {
  const store = new SqliteStore(db, DEFAULT_DETECTION);
  try {
    for (let first = 0; first < options.turns; first += BATCH) {
      const events = benchBatch(first, Math.min(BATCH, options.turns - first), options).map((raw): CacheEvent => {
        const converted = toCacheEvent(raw);
        if (!converted.ok) throw new Error(`bench event rejected: ${converted.field}: ${converted.error}`);
        return converted.event;
      });
      await store.write([{ project: 'default', events }]);
      if ((first / BATCH) % 50 === 0) process.stderr.write(`grafana bench: ${((first + events.length) / 1e6).toFixed(2)}M turns written\n`);
    }
  } finally {
    await store.close();
  }
}

async function timed(samples: number, run: () => void | Promise<void>): Promise<number[]> {
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
  query: string;
  /** The same question as a plain scan of the turns table, where the endpoint reads rollups or running sums. */
  scan?: string;
}

const IN_RANGE = 'ts >= @from AND ts < @to';
const RATE = 'sum(read) * 1.0 / nullif(sum(uncached) + sum(read) + sum(write), 0)';

function cases(sessionId: string): Case[] {
  return [
    { name: 'summary', query: 'summary', scan: `SELECT count(*), sum(uncached), sum(read), sum(write), sum(output), ${RATE} FROM turns WHERE ${IN_RANGE}` },
    { name: 'cache-rate', query: 'cache-rate?interval=60000', scan: `SELECT ts / 60000 AS m, ${RATE} FROM turns WHERE ${IN_RANGE} GROUP BY m` },
    {
      name: 'cache-rate by model',
      query: 'cache-rate?interval=60000&groupBy=model',
      scan: `SELECT ts / 60000 AS m, usage_model_id, ${RATE} FROM turns WHERE ${IN_RANGE} GROUP BY m, usage_model_id`,
    },
    { name: 'tokens', query: 'tokens?interval=60000', scan: `SELECT ts / 60000 AS m, sum(uncached), sum(read), sum(write), sum(output) FROM turns WHERE ${IN_RANGE} GROUP BY m` },
    {
      name: 'breaks-over-time by reason',
      query: 'breaks-over-time?interval=60000',
      scan: `SELECT t.ts / 60000 AS m, b.reason, count(*) FROM turns t JOIN breaks b ON b.turn_id = t.id WHERE t.ts >= @from AND t.ts < @to GROUP BY m, b.reason`,
    },
    {
      name: 'totals by reason',
      query: 'totals?groupBy=reason',
      scan: `SELECT b.reason, count(*) FROM turns t JOIN breaks b ON b.turn_id = t.id WHERE t.ts >= @from AND t.ts < @to GROUP BY b.reason`,
    },
    {
      name: 'break-causes',
      query: 'break-causes',
      scan: `SELECT b.reason, json_extract(b.record, '$.cause') AS cause, count(*), sum(json_extract(b.record, '$.missedCacheReadTokens'))
             FROM turns t JOIN breaks b ON b.turn_id = t.id WHERE t.ts >= @from AND t.ts < @to GROUP BY b.reason, cause`,
    },
    {
      name: 'breaks (500 rows)',
      query: 'breaks?limit=500',
      scan: `SELECT b.record FROM turns t JOIN breaks b ON b.turn_id = t.id WHERE t.ts >= @from AND t.ts < @to ORDER BY t.ts DESC LIMIT 500`,
    },
    {
      name: 'changed-tools',
      query: 'changed-tools',
      scan: `SELECT tool.value, count(*) AS n FROM turns t JOIN breaks b ON b.turn_id = t.id, json_each(b.record, '$.changedToolNames') AS tool
             WHERE t.ts >= @from AND t.ts < @to GROUP BY tool.value ORDER BY n DESC LIMIT 20`,
    },
    {
      name: 'sessions by worst cache rate',
      query: 'sessions?order=worst_cache_rate',
      scan: `SELECT stream_id, ${RATE} AS rate FROM turns WHERE ${IN_RANGE} GROUP BY stream_id ORDER BY rate LIMIT 20`,
    },
    {
      name: 'sessions by extra cost',
      query: 'sessions?order=extra_cost',
      scan: `SELECT t.stream_id, sum(json_extract(b.record, '$.estimatedExtraCostUsd')) AS cost FROM turns t LEFT JOIN breaks b ON b.turn_id = t.id
             WHERE t.ts >= @from AND t.ts < @to GROUP BY t.stream_id ORDER BY cost DESC LIMIT 20`,
    },
    { name: 'turns of one session', query: `turns?sessionId=${sessionId}` },
    {
      name: 'annotations (1,000)',
      query: 'annotations',
      scan: `SELECT b.record FROM turns t JOIN breaks b ON b.turn_id = t.id WHERE t.ts >= @from AND t.ts < @to ORDER BY t.ts DESC LIMIT 1000`,
    },
    { name: 'values: models', query: 'values?dimension=model', scan: `SELECT DISTINCT usage_model_id FROM turns WHERE ${IN_RANGE}` },
    { name: 'values: sessions', query: 'values?dimension=sessionId', scan: `SELECT stream_id, max(ts) AS last FROM turns WHERE ${IN_RANGE} GROUP BY stream_id ORDER BY last DESC LIMIT 500` },
  ];
}

export async function benchGrafana(turns = 1_000_000): Promise<Row[]> {
  const dir = mkdtempSync(join(tmpdir(), 'cachebreak-bench-grafana-'));
  try {
    const start = Date.parse('2026-11-29T00:00:00Z');
    const range = { from: start, to: start + DAY };
    const db = join(dir, 'cachebreak.db');
    await fill(db, { turns, start, spanMs: DAY, concurrency: 64 });

    // Every endpoint first, then every scan: a scan can outlast the server's
    // keep-alive timeout, and a closed idle connection would fail the next request.
    const server = await startServerProcess(db);
    const latencies = new Map<string, number[]>();
    try {
      for (const c of cases('sess_0')) {
        const url = `${server.url}/grafana/${c.query}${c.query.includes('?') ? '&' : '?'}from=${range.from}&to=${range.to}`;
        latencies.set(
          c.name,
          await timed(SAMPLES, async () => {
            const response = await fetch(url);
            const body = (await response.json()) as unknown[];
            if (response.status !== 200 || body.length === 0) throw new Error(`${url}: ${response.status} ${JSON.stringify(body).slice(0, 200)}`);
          }),
        );
      }
    } finally {
      await server.stop();
    }
    const rows: Row[] = [];
    const scans = new Database(db, { readonly: true });
    try {
      const millions = (turns / 1e6).toLocaleString('en-US');
      for (const c of cases('sess_0')) {
        const scan = c.scan ? scans.prepare(c.scan) : undefined;
        const baseline = scan ? await timed(Math.min(SAMPLES, 10), () => void scan.all(range)) : undefined;
        const figure = `/grafana/${c.name}, 24 h, ${millions}M turns`;
        const base = (p: number) => (baseline ? { baseline: { label: `plain scan of turns, p${p}`, value: percentile(baseline, p) } } : {});
        const measured = latencies.get(c.name)!;
        rows.push({ figure: `${figure}: p50`, value: percentile(measured, 50), unit: 'ms', ...base(50) });
        rows.push({ figure: `${figure}: p95`, value: percentile(measured, 95), unit: 'ms', aim: '< 100 ms', ...base(95) });
      }
    } finally {
      scans.close();
    }
    return rows;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
