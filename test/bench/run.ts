// `npm run bench`: prints every figure beside its same-run baseline, writes
// bench-results.json and regenerates docs/performance.md's table from it.
// The service figures are measured at each size of `--sizes` (default 1M and
// 10M turns; `--sizes 200000` for a quick look): ingest over HTTP fills the
// database, and the read figures are measured on that same file.
// Each size is measured on PostgreSQL too (ingest with 1, 2 and 3 serve
// nodes, the read figures on the database they filled; postgres.ts).
// `--only proxy` (the provider proxy), `--only library` (the detector
// library's cost per call), `--only insights` (the insight endpoints, on a
// database filled at each of `--sizes`) or `--only postgres` (PostgreSQL's
// figures at each of `--sizes`, beside SQLite's ingest and endpoints)
// measures that section alone and only prints it.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { benchCore } from './core.js';
import { benchIngest, CONCURRENCY } from './ingest.js';
import { benchInsights } from './insights.js';
import { benchLatency } from './latency.js';
import { benchLibrary } from './library.js';
import { printRows, writeResults, type Row } from './lib.js';
import { benchOtlp } from './otlp.js';
import { benchPostgres } from './postgres.js';
import { benchProxy } from './proxy.js';
import { benchQueries, endpointLatencies } from './queries.js';
import { benchTail } from './tail.js';
import type { WorkloadOptions } from './workload.js';

const DAY = 86_400_000;
const sizesFlag = process.argv.indexOf('--sizes');
const sizes = (sizesFlag >= 0 ? process.argv[sizesFlag + 1]! : '1000000,10000000').split(',').map(Number);
if (sizes.some((n) => !Number.isSafeInteger(n) || n < 1_000 || n % 1_000 !== 0)) {
  throw new Error('--sizes: a comma-separated list of turn counts, each a multiple of 1,000');
}

/** A database of `turns` turns over a day, filled over HTTP, given to `measure`, then removed. */
async function filled(turns: number, measure: (db: string, options: WorkloadOptions, ingest: Row[]) => Promise<Row[]>): Promise<Row[]> {
  const dir = mkdtempSync(join(tmpdir(), 'cachebreak-bench-'));
  try {
    const options = { turns, start: Date.parse('2026-11-29T00:00:00Z'), spanMs: DAY, concurrency: CONCURRENCY };
    const ingest = await benchIngest(dir, options);
    return await measure(join(dir, 'cachebreak.db'), options, ingest);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** PostgreSQL's figures at the size of a SQLite database `filled` made, beside its ingest rate and its endpoints. */
async function besideSqlite(db: string, options: WorkloadOptions, ingest: Row[], latencies?: Map<string, number[]>): Promise<Row[]> {
  return benchPostgres(options, { ingest: ingest[0]!.value, latencies: latencies ?? (await endpointLatencies(db, options)) });
}

/** The sections measured alone with --only. */
const ALONE: Record<string, () => Row[] | Promise<Row[]>> = {
  proxy: benchProxy,
  library: benchLibrary,
  insights: async () => {
    const rows: Row[] = [];
    for (const turns of sizes) rows.push(...(await filled(turns, (db, options) => benchInsights(db, options))));
    return rows;
  },
  postgres: async () => {
    const rows: Row[] = [];
    for (const turns of sizes) rows.push(...(await filled(turns, (db, options, ingest) => besideSqlite(db, options, ingest))));
    return rows;
  },
};
if (process.argv.includes('--only')) {
  const only = process.argv[process.argv.indexOf('--only') + 1] ?? '';
  const section = Object.hasOwn(ALONE, only) ? ALONE[only] : undefined;
  if (!section) throw new Error(`--only: one of ${Object.keys(ALONE).join(', ')}`);
  printRows(await section());
  process.exit(0);
}

async function atScale(turns: number): Promise<Row[]> {
  return filled(turns, async (db, options, ingest) => {
    const latencies = await endpointLatencies(db, options);
    return [...ingest, ...(await benchQueries(db, options, latencies)), ...(await benchInsights(db, options)), ...(await besideSqlite(db, options, ingest, latencies))];
  });
}

const smallest = Math.min(...sizes);
const rows: Row[] = [...benchCore(), ...benchLibrary()];
for (const turns of sizes) rows.push(...(await atScale(turns)));
rows.push(...(await benchLatency()), ...(await benchOtlp(smallest)), ...(await benchTail(smallest)), ...(await benchProxy()));
printRows(rows);
writeResults('bench-results.json', rows, sizes);
execFileSync('npm', ['run', 'docs'], { stdio: 'inherit' });
