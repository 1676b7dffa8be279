// Read latency of the insights (docs/insights.md): p50/p95 of each
// GET /v1/insights/* endpoint over 24 hours of data, through a real server
// process on the file the ingest benchmark filled.
import { percentile, type Row } from './lib.js';
import { timed } from './queries.js';
import { startServerProcess } from './server-process.js';
import type { WorkloadOptions } from './workload.js';

const DAY = 86_400_000;
/** Each answer can take a second at 10M turns: fewer samples than the rollup queries. */
const SAMPLES = 20;

export const INSIGHT_ENDPOINTS = ['avoidable', 'volatile', 'fanout', 'ttl', 'chronic', 'agreement'] as const;

export async function benchInsights(db: string, options: WorkloadOptions): Promise<Row[]> {
  const range = `from=${options.start}&to=${options.start + DAY}`;
  const server = await startServerProcess(db);
  const rows: Row[] = [];
  const millions = (options.turns / 1e6).toLocaleString('en-US');
  try {
    for (const name of INSIGHT_ENDPOINTS) {
      const url = `${server.url}/v1/insights/${name}?${range}`;
      const measured = await timed(SAMPLES, async () => {
        const response = await fetch(url);
        const body = await response.text();
        if (response.status !== 200) throw new Error(`${url}: ${response.status} ${body.slice(0, 200)}`);
      });
      const figure = `/v1/insights/${name}, 24 h, ${millions}M turns`;
      rows.push({ figure: `${figure}: p50`, value: percentile(measured, 50), unit: 'ms' });
      rows.push({ figure: `${figure}: p95`, value: percentile(measured, 95), unit: 'ms', aim: '< 1,000 ms at 1M' });
    }
  } finally {
    await server.stop();
  }
  return rows;
}
