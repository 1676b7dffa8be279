// Ingest figures: HTTP ingest of 1,000-event batches into a server process,
// beside a raw prepared insert of the same rows; the server's peak memory;
// bytes on disk per turn. The database it leaves is what queries.ts reads.
import Database from 'better-sqlite3';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { type Row } from './lib.js';
import { startServerProcess } from './server-process.js';
import { benchBatch, benchEvent, type WorkloadOptions } from './workload.js';

export const BATCH = 1_000;
/** Sessions active at once (each with a subagent stream): a team's worth of agents. */
export const CONCURRENCY = 64;
/** Requests in flight at once, as several collectors or agents would send. */
const SENDERS = 4;

/** The columns of a turn that the raw baselines write, and their values in an event. */
export const RAW_COLUMNS = ['request_id', 'session_id', 'agent_id', 'ts', 'end_ts', 'model', 'provider', 'uncached', 'read', 'write', 'output'] as const;
export const rawValues = (e: Record<string, unknown>) =>
  [e.requestId, e.sessionId, e.agentId, e.ts, e.endTs, e.model, e.provider, e.uncachedInputTokens, e.cacheReadInputTokens, e.cacheWriteInputTokens, e.outputTokens];

/** The physical limit: the same rows through one prepared INSERT, 1,000 per transaction. */
function rawInsert(dir: string, options: WorkloadOptions): number {
  const db = new Database(join(dir, 'raw.db'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.exec(`CREATE TABLE turns (id INTEGER PRIMARY KEY, request_id TEXT, session_id TEXT, agent_id TEXT, ts INTEGER,
    end_ts INTEGER, model TEXT, provider TEXT, uncached INTEGER, read INTEGER, write INTEGER, output INTEGER)`);
  const insert = db.prepare(`INSERT INTO turns VALUES (NULL, ${RAW_COLUMNS.map(() => '?').join(', ')})`);
  const batch = db.transaction((events: Record<string, unknown>[]) => {
    for (const e of events) insert.run(...rawValues(e));
  });
  const batches = Array.from({ length: options.turns / BATCH }, (_, b) => benchBatch(b * BATCH, BATCH, options));
  const start = performance.now();
  for (const events of batches) batch(events);
  const rate = (options.turns * 1000) / (performance.now() - start);
  db.close();
  return rate;
}

/** The largest resident set of a process, sampled every 250 ms until stopped. */
export function sampleRss(pid: number): { stop(): number } {
  let peak = 0;
  const sample = () => {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    if (match) peak = Math.max(peak, Number(match[1]) / 1024);
  };
  sample();
  const timer = setInterval(sample, 250);
  return {
    stop() {
      clearInterval(timer);
      sample();
      return peak;
    },
  };
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

/**
 * How batches reach several servers: `spread`, each batch to the next server
 * (a load balancer without affinity: every server writes every session);
 * `pinned`, each session's events to one server (session affinity).
 */
export type Routing = 'spread' | 'pinned';

/** The events of the sessions pinned to server `node` of `nodes`, in order: the j-th of them is event `indexOf(j)`. */
function pinnedIndex(node: number, nodes: number, concurrency: number): (j: number) => number {
  const slots = Array.from({ length: concurrency }, (_, slot) => slot).filter((slot) => slot % nodes === node);
  return (j) => Math.floor(j / slots.length) * concurrency + slots[j % slots.length]!;
}

/**
 * Sends `turns` events (from `first`) in 1,000-event batches, SENDERS
 * requests in flight per server (agents send at once), routed to `urls` as
 * `routing` says.
 */
export async function ingestOverHttp(urls: string | readonly string[], options: WorkloadOptions, first = 0, routing: Routing = 'spread'): Promise<number> {
  const targets = typeof urls === 'string' ? [urls] : urls;
  const end = first + options.turns;
  const start = performance.now();
  if (routing === 'spread') {
    let next = first;
    const sender = async (url: string) => {
      while (next < end) {
        const from = next;
        next += BATCH;
        await post(url, benchBatch(from, BATCH, options));
      }
    };
    await Promise.all(Array.from({ length: SENDERS * targets.length }, (_, i) => sender(targets[i % targets.length]!)));
  } else {
    const senders = targets.flatMap((url, node) => {
      const indexOf = pinnedIndex(node, targets.length, options.concurrency);
      let j = 0;
      while (indexOf(j) < first) j++;
      const sender = async () => {
        while (indexOf(j) < end) {
          const batch: Record<string, unknown>[] = [];
          for (; batch.length < BATCH && indexOf(j) < end; j++) batch.push(benchEvent(indexOf(j), options));
          await post(url, batch);
        }
      };
      return Array.from({ length: SENDERS }, sender);
    });
    await Promise.all(senders);
  }
  return (options.turns * 1000) / (performance.now() - start);
}

/** Ingests `turns` turns over HTTP into `dir`/cachebreak.db (left there, checkpointed) and measures it. */
export async function benchIngest(dir: string, options: WorkloadOptions): Promise<Row[]> {
  const { turns } = options;
  const baseline = rawInsert(dir, { ...options, turns: Math.min(turns, 200_000) });
  const db = join(dir, 'cachebreak.db');
  const server = await startServerProcess(db);
  const rss = sampleRss(server.child.pid!);
  const ingestRate = await ingestOverHttp(server.url, options);
  const peakRss = rss.stop();
  await server.stop(); // closing checkpoints the WAL into the file
  const millions = (turns / 1e6).toLocaleString('en-US');
  return [
    {
      figure: `HTTP ingest, JSON, 1,000-event batches, ${CONCURRENCY} concurrent sessions (${millions}M turns)`,
      value: ingestRate,
      unit: 'turns/s',
      baseline: { label: 'raw prepared INSERT of the same rows', value: baseline },
      aim: '≥ 50,000 (issue 3), ≥ 100,000 (issue 7)',
    },
    { figure: `disk bytes per turn at ${millions}M turns`, value: statSync(db).size / turns, unit: 'B/turn', aim: '≤ 100 at 10M' },
    { figure: `peak RSS of the server while ingesting ${millions}M turns`, value: peakRss, unit: 'MiB', aim: '≤ 300 MB at 10M' },
  ];
}
