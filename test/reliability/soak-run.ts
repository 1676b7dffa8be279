// `npm run soak -- --minutes 10 [--rate N]`: the full soak figure.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { soak } from './soak.js';

const arg = (name: string, fallback: number) => {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? Number(process.argv[at + 1]) : fallback;
};
const dir = mkdtempSync(join(tmpdir(), 'cachebreak-soak-'));
try {
  const report = await soak({ dir, minutes: arg('minutes', 10), rate: arg('rate', 5_000) });
  console.log(`soak: ${report.turns.toLocaleString('en-US')} turns at ${Math.round(report.turnsPerSecond).toLocaleString('en-US')}/s`);
  console.log(`ingest latency (${500}-event requests): p50 ${report.ingestP50Ms.toFixed(1)} ms, p99 ${report.ingestP99Ms.toFixed(1)} ms`);
  console.log(`dashboard queries: ${report.dashboardRequests} requests, p95 ${report.dashboardP95Ms.toFixed(1)} ms`);
  for (const d of report.dashboards) {
    console.log(`  ${d.file}: ${d.refreshes} refreshes, ${d.requests} requests; request p95 ${d.requestP95Ms.toFixed(1)} ms, refresh p95 ${d.refreshP95Ms.toFixed(1)} ms`);
  }
  console.log(`dashboard errors: ${report.dashboardErrorCount}${report.dashboardErrors.map((e) => `\n  ${e}`).join('')}`);
  console.log(`RSS (s, MiB; database MiB): ${report.rss.map(([s, m, db]) => `${s}:${m};${db}`).join(' ')}`);
  console.log(`RSS kept after warm-up, beyond the page caches' share of the database's growth: ${(report.growthAfterWarmup * 100).toFixed(1)} % (limit 10 %)`);
  process.exitCode = report.growthAfterWarmup > 0.1 || report.dashboardErrorCount > 0 ? 1 : 0;
} finally {
  rmSync(dir, { recursive: true, force: true });
}
