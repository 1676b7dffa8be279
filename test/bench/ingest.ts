// Service figures: HTTP ingest of 1,000-event batches against a raw prepared
// insert of the same rows; bytes on disk per turn; /v1/stats latency.
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { percentile, type Row } from './lib.js';
import { startServerProcess } from './server-process.js';
import { benchBatch, type WorkloadOptions } from './workload.js';

const BATCH = 1_000;
/** Sessions active at once (each with a subagent stream): a team's worth of agents. */
const CONCURRENCY = 64;
/** Requests in flight at once, as several collectors or agents would send. */
const SENDERS = 4;
const DAY = 86_400_000;

/** The physical limit: the same rows through one prepared INSERT, 1,000 per transaction. */
function rawInsert(dir: string, options: WorkloadOptions): number {
  const db = new Database(join(dir, 'raw.db'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.exec(`CREATE TABLE turns (id INTEGER PRIMARY KEY, request_id TEXT, session_id TEXT, agent_id TEXT, ts INTEGER,
    end_ts INTEGER, model TEXT, provider TEXT, uncached INTEGER, read INTEGER, write INTEGER, output INTEGER)`);
  const insert = db.prepare('INSERT INTO turns VALUES (NULL, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)');
  const batch = db.transaction((events: Record<string, unknown>[]) => {
    for (const e of events) {
      insert.run(e.requestId, e.sessionId, e.agentId, e.ts, e.endTs, e.model, e.provider, e.uncachedInputTokens, e.cacheReadInputTokens, e.cacheWriteInputTokens, e.outputTokens);
    }
  });
  const batches = Array.from({ length: options.turns / BATCH }, (_, b) => benchBatch(b * BATCH, BATCH, options));
  const start = performance.now();
  for (const events of batches) batch(events);
  const rate = (options.turns * 1000) / (performance.now() - start);
  db.close();
  return rate;
}

async function post(url: string, events: Record<string, unknown>[]): Promise<void> {
  const response = await fetch(`${url}/v1/events`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ events }),
  });
  const body = (await response.json()) as { accepted: number; rejected: unknown[] };
  if (response.status !== 200 || body.rejected.length > 0) throw new Error(`ingest failed: ${response.status} ${JSON.stringify(body).slice(0, 300)}`);
}

/** Sends `turns` events in 1,000-event batches, SENDERS requests in flight (agents send at once). */
async function ingestOverHttp(url: string, options: WorkloadOptions, first = 0): Promise<number> {
  let next = first;
  const end = first + options.turns;
  const start = performance.now();
  const sender = async () => {
    while (next < end) {
      const from = next;
      next += BATCH;
      await post(url, benchBatch(from, BATCH, options));
    }
  };
  await Promise.all(Array.from({ length: SENDERS }, sender));
  return (options.turns * 1000) / (performance.now() - start);
}

export async function benchIngest(turns = 1_000_000): Promise<Row[]> {
  const dir = mkdtempSync(join(tmpdir(), 'cachebreak-bench-'));
  try {
    const start = Date.parse('2026-11-29T00:00:00Z');
    const options: WorkloadOptions = { turns, start, spanMs: DAY, concurrency: CONCURRENCY };
    const baseline = rawInsert(dir, { ...options, turns: Math.min(turns, 200_000) });

    const db = join(dir, 'cachebreak.db');
    let server = await startServerProcess(db);
    const ingestRate = await ingestOverHttp(server.url, options);
    await server.stop(); // closing checkpoints the WAL into the file
    const bytesPerTurn = statSync(db).size / turns;

    server = await startServerProcess(db);
    const query = `${server.url}/v1/stats?from=${start}&to=${start + DAY}&interval=1m`;
    const latencies: number[] = [];
    for (let i = 0; i < 60; i++) {
      const t0 = performance.now();
      const response = await fetch(query);
      const body = (await response.json()) as { buckets: unknown[] };
      if (body.buckets.length !== 1440) throw new Error(`expected 1440 buckets, got ${body.buckets.length}`);
      latencies.push(performance.now() - t0);
    }
    await server.stop();
    const millions = (turns / 1e6).toLocaleString('en-US');
    return [
      {
        figure: `HTTP ingest, JSON, 1,000-event batches, ${CONCURRENCY} concurrent sessions (${millions}M turns)`,
        value: ingestRate,
        unit: 'turns/s',
        baseline: { label: 'raw prepared INSERT of the same rows', value: baseline },
        aim: '≥ 50,000 (issue 3), ≥ 100,000 (issue 7)',
      },
      { figure: `disk bytes per turn at ${millions}M turns`, value: bytesPerTurn, unit: 'B/turn', aim: '≤ 100 at 10M' },
      { figure: `/v1/stats, 24 h in 1-minute buckets, ${millions}M turns: p50`, value: percentile(latencies, 50), unit: 'ms' },
      { figure: `/v1/stats, 24 h in 1-minute buckets, ${millions}M turns: p95`, value: percentile(latencies, 95), unit: 'ms', aim: '< 100 ms' },
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
