// Ingest latency of one small request (a single turn) while four dashboards
// refresh every second, beside the same request on an idle server.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { percentile, type Row } from './lib.js';
import { startServerProcess } from './server-process.js';
import { benchBatch, benchEvent, type WorkloadOptions } from './workload.js';

const DAY = 86_400_000;
const SECONDS = 30;
const EVERY_MS = 50;

/** What an overview dashboard asks on each refresh, over the last 24 h. */
function dashboardQueries(from: number, to: number): string[] {
  const range = `from=${from}&to=${to}&interval=1m`;
  return [
    `/grafana/summary?${range}`,
    `/grafana/cache-rate?${range}&groupBy=model`,
    `/grafana/tokens?${range}`,
    `/grafana/breaks-over-time?${range}&groupBy=reason`,
    `/grafana/breaks?${range}`,
    `/grafana/annotations?${range}`,
  ];
}

async function small(url: string, options: WorkloadOptions, i: number): Promise<number> {
  const t0 = performance.now();
  const response = await fetch(`${url}/v1/events`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ events: [benchEvent(i, options)] }),
  });
  await response.arrayBuffer();
  if (response.status !== 200) throw new Error(`ingest answered ${response.status}`);
  return performance.now() - t0;
}

/** p99 of single-turn requests sent every EVERY_MS for SECONDS, with `dashboards` refreshing each second. */
async function measure(url: string, options: WorkloadOptions, first: number, dashboards: number): Promise<number> {
  const end = Date.now() + SECONDS * 1000;
  const latencies: number[] = [];
  const refresh = async () => {
    while (Date.now() < end) {
      const tick = Date.now();
      await Promise.all(dashboardQueries(options.start, options.start + DAY).map((q) => fetch(`${url}${q}`).then((r) => r.arrayBuffer())));
      await new Promise((r) => setTimeout(r, Math.max(0, 1000 - (Date.now() - tick))));
    }
  };
  const ingest = async () => {
    for (let i = first; Date.now() < end; i++) {
      latencies.push(await small(url, options, i));
      await new Promise((r) => setTimeout(r, EVERY_MS));
    }
  };
  await Promise.all([ingest(), ...Array.from({ length: dashboards }, refresh)]);
  return percentile(latencies, 99);
}

export async function benchLatency(prefill = 200_000): Promise<Row[]> {
  const dir = mkdtempSync(join(tmpdir(), 'cachebreak-latency-'));
  const options: WorkloadOptions = { turns: prefill + 10_000, start: Date.now() - DAY, spanMs: DAY, concurrency: 64 };
  const server = await startServerProcess(join(dir, 'latency.db'));
  try {
    for (let first = 0; first < prefill; first += 1_000) {
      await fetch(`${server.url}/v1/events`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ events: benchBatch(first, 1_000, options) }) });
    }
    const idle = await measure(server.url, options, prefill, 0);
    const busy = await measure(server.url, options, prefill + 5_000, 4);
    return [
      {
        figure: `ingest p99 of a 1-turn request, 4 dashboards refreshing every second (${prefill.toLocaleString('en-US')} turns stored)`,
        value: busy,
        unit: 'ms',
        baseline: { label: 'same request, idle server', value: idle },
        aim: '< 20 ms',
      },
    ];
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
