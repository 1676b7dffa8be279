// `npm run bench`: prints every figure beside its same-run baseline, writes
// bench-results.json and regenerates docs/performance.md's table from it.
// The service figures are measured at each size of `--sizes` (default 1M and
// 10M turns; `--sizes 200000` for a quick look): ingest over HTTP fills the
// database, and the read figures are measured on that same file.
// Each size is measured on PostgreSQL too (ingest with 1, 2 and 3 serve
// nodes, the read figures on the database they filled; postgres.ts).
// `--only proxy` (the provider proxy) or `--only library` (the detector
// library's cost per call) measures that section alone and only prints it;
// `--only postgres` the PostgreSQL figures at each size of `--sizes`, beside
// SQLite's ingest and endpoints (measured too), and only prints them.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { benchCore } from './core.js';
import { benchIngest, CONCURRENCY } from './ingest.js';
import { benchLatency } from './latency.js';
import { benchLibrary } from './library.js';
import { assertReachable } from '../pg.js';
import { printRows, writeResults, type Row } from './lib.js';
import { benchOtlp } from './otlp.js';
import { benchPostgres } from './postgres.js';
import { benchProxy } from './proxy.js';
import { benchQueries, endpointLatencies } from './queries.js';
import { benchTail } from './tail.js';

const DAY = 86_400_000;
/** The sections measured alone with --only, and postgres, measured alone at each size. */
const ALONE: Record<string, () => Row[] | Promise<Row[]>> = { proxy: benchProxy, library: benchLibrary };
const only = process.argv.includes('--only') ? (process.argv[process.argv.indexOf('--only') + 1] ?? '') : undefined;
if (only !== undefined && only !== 'postgres') {
  const section = Object.hasOwn(ALONE, only) ? ALONE[only] : undefined;
  if (!section) throw new Error(`--only: one of ${[...Object.keys(ALONE), 'postgres'].join(', ')}`);
  printRows(await section());
  process.exit(0);
}
const sizesFlag = process.argv.indexOf('--sizes');
const sizes = (sizesFlag >= 0 ? process.argv[sizesFlag + 1]! : '1000000,10000000').split(',').map(Number);
if (sizes.some((n) => !Number.isSafeInteger(n) || n < 1_000 || n % 1_000 !== 0)) {
  throw new Error('--sizes: a comma-separated list of turn counts, each a multiple of 1,000');
}

/** Every figure at one size: SQLite's, then PostgreSQL's beside them (with `postgresOnly`, SQLite's ingest rate and PostgreSQL's). */
async function atScale(turns: number, postgresOnly: boolean): Promise<Row[]> {
  const dir = mkdtempSync(join(tmpdir(), 'cachebreak-bench-'));
  try {
    const options = { turns, start: Date.parse('2026-11-29T00:00:00Z'), spanMs: DAY, concurrency: CONCURRENCY };
    const ingest = await benchIngest(dir, options);
    const db = join(dir, 'cachebreak.db');
    const latencies = await endpointLatencies(db, options);
    const onPostgres = await benchPostgres(options, { ingest: ingest[0]!.value, latencies });
    return postgresOnly ? onPostgres : [...ingest, ...(await benchQueries(db, options, latencies)), ...onPostgres];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await assertReachable();
if (only === 'postgres') {
  const rows: Row[] = [];
  for (const turns of sizes) rows.push(...(await atScale(turns, true)));
  printRows(rows);
  process.exit(0);
}

const smallest = Math.min(...sizes);
const rows: Row[] = [...benchCore(), ...benchLibrary()];
for (const turns of sizes) rows.push(...(await atScale(turns, false)));
rows.push(...(await benchLatency()), ...(await benchOtlp(smallest)), ...(await benchTail(smallest)), ...(await benchProxy()));
printRows(rows);
writeResults('bench-results.json', rows, sizes);
execFileSync('npm', ['run', 'docs'], { stdio: 'inherit' });
