// Soak: sustained batched ingest into a real server while four dashboards
// refresh every second. Measures throughput, ingest and dashboard latency, and
// the server's memory over time (which must stop growing after warm-up).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { percentile } from '../bench/lib.js';
import { benchBatch, type WorkloadOptions } from '../bench/workload.js';
import { postEvents, spawnServer } from '../e2e/process.js';

export interface SoakOptions {
  dir: string;
  minutes: number;
  /** Events per second the ingest clients aim for. */
  rate: number;
}

export interface SoakReport {
  turns: number;
  turnsPerSecond: number;
  ingestP50Ms: number;
  ingestP99Ms: number;
  dashboardP95Ms: number;
  dashboardRequests: number;
  /** [seconds since start, RSS in MiB] every few seconds. */
  rss: [number, number][];
  /** Largest RSS after warm-up (the first third, at least WARMUP_MS) over the largest RSS during warm-up. */
  growthAfterWarmup: number;
}

const BATCH = 500;

/**
 * The shortest warm-up: the main thread's and the reader thread's heaps each
 * grow until their first full collection, which at 1,000 turns/s comes about
 * 30 s in; what matters is that memory stops growing after that.
 */
const WARMUP_MS = 30_000;

function rssMiB(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) / 1024 : NaN;
}

/** What a dashboard asks for on each refresh (24 h of data at 1-minute resolution). */
function dashboardQueries(from: number, to: number): string[] {
  const range = `from=${from}&to=${to}`;
  return [
    `/v1/stats?${range}&interval=1m`,
    `/v1/stats?${range}&interval=1m&groupBy=model`,
    `/v1/stats?${range}&interval=1m&groupBy=reason`,
    `/v1/breaks?${range}&limit=50`,
    `/v1/sessions?${range}&order=worst_cache_rate&limit=10`,
  ];
}

export async function soak(options: SoakOptions): Promise<SoakReport> {
  const server = await spawnServer(join(options.dir, 'soak.db'));
  const durationMs = options.minutes * 60_000;
  const start = Date.now();
  const workload: WorkloadOptions = { turns: Math.ceil((options.rate * durationMs) / 1000) + BATCH, start: start - 3_600_000, spanMs: durationMs + 3_600_000, concurrency: 64 };
  const ingestMs: number[] = [];
  const dashboardMs: number[] = [];
  const rss: [number, number][] = [];
  let sent = 0;
  const done = () => Date.now() - start >= durationMs;

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
    }
  };
  const dashboard = async () => {
    while (!done()) {
      const tick = Date.now();
      await Promise.all(
        dashboardQueries(start - 86_400_000, Date.now()).map(async (path) => {
          const t0 = performance.now();
          const response = await fetch(`${server.url}${path}`);
          await response.arrayBuffer();
          dashboardMs.push(performance.now() - t0);
        }),
      );
      await new Promise((r) => setTimeout(r, Math.max(0, 1000 - (Date.now() - tick))));
    }
  };
  const sampler = async () => {
    while (!done()) {
      rss.push([Math.round((Date.now() - start) / 1000), Math.round(rssMiB(server.pid))]);
      await new Promise((r) => setTimeout(r, 2_000));
    }
  };
  try {
    await Promise.all([ingest(), ingest(), dashboard(), dashboard(), dashboard(), dashboard(), sampler()]);
  } finally {
    await server.stop();
  }
  const warmupSeconds = Math.max(durationMs / 3, WARMUP_MS) / 1000;
  const warmup = rss.filter(([s]) => s <= warmupSeconds);
  const after = rss.filter(([s]) => s > warmupSeconds);
  const warm = Math.max(...warmup.map(([, m]) => m));
  return {
    turns: sent,
    turnsPerSecond: sent / ((Date.now() - start) / 1000),
    ingestP50Ms: percentile(ingestMs, 50),
    ingestP99Ms: percentile(ingestMs, 99),
    dashboardP95Ms: percentile(dashboardMs, 95),
    dashboardRequests: dashboardMs.length,
    rss,
    growthAfterWarmup: Math.max(...after.map(([, m]) => m)) / warm - 1,
  };
}
