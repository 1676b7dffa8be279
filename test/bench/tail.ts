// File tailing: a large NDJSON file and a large telemetry outfile read from
// the start, into a database and decoded only, each beside a plain read of
// the same file (fs.read into buffers, no parsing) in the same run; and the
// CPU a `cachebreak tail` process uses while following 100 idle files
// (needs `npm run build`).
import { spawn } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, readSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SERVICE_DETECTION } from '../../src/prices/index.js';
import { Pipeline } from '../../src/ingest/pipeline.js';
import { emptyDecoded } from '../../src/ingest/tail/formats/decoder.js';
import { decoderOf, framerOf, type Format } from '../../src/ingest/tail/formats/index.js';
import { pipelineSink, Tailer } from '../../src/ingest/tail/index.js';
import { SqliteStore } from '../../src/store/sqlite/store.js';
import { Counters } from '../../src/telemetry/counters.js';
import { createLogger } from '../../src/telemetry/logfmt.js';
import type { Row } from './lib.js';
import { benchEvent, type WorkloadOptions } from './workload.js';

const MB = 1e6;
const IDLE_FILES = 100;
const IDLE_SECONDS = 10;

/** The workload's turns, one per line. */
function ndjsonFile(path: string, turns: number): void {
  const options: WorkloadOptions = { turns, start: Date.parse('2026-11-29T00:00:00Z'), spanMs: 86_400_000, concurrency: 64 };
  const lines: string[] = [];
  for (let i = 0; i < turns; i++) lines.push(JSON.stringify(benchEvent(i, options)));
  writeFileSync(path, lines.join('\n') + '\n');
}

/** Copies of Qwen Code's outfile fixture (SDK objects dumped as the harness does), each a new session. */
function outfile(path: string, copies: number): void {
  const original = readFileSync(join(process.cwd(), 'test/fixtures/otel-file/qwen-code-0.24.4.log'), 'utf8');
  const session = '7f3c9a2e-4b1d-4e8a-9c6f-2d5e8a1b3c4d';
  const parts: string[] = [];
  for (let c = 0; c < copies; c++) parts.push(original.replaceAll(session, `${session.slice(0, -8)}${c.toString(16).padStart(8, '0')}`).replaceAll('chatcmpl-', `chatcmpl-${c}-`));
  writeFileSync(path, parts.join(''));
}

/** The baseline: the file's bytes into 1 MiB buffers, nothing else. Returns MB/s. */
function plainRead(path: string): number {
  const buffer = Buffer.allocUnsafe(1 << 20);
  const fd = openSync(path, 'r');
  const start = performance.now();
  let bytes = 0;
  for (let n = readSync(fd, buffer, 0, buffer.length, bytes); n > 0; n = readSync(fd, buffer, 0, buffer.length, bytes)) bytes += n;
  const seconds = (performance.now() - start) / 1000;
  closeSync(fd);
  return bytes / MB / seconds;
}

/** Framing and decoding only (what tail does before the store). Returns units/s and MB/s. */
function decodeOnly(path: string, format: Format): { units: number; perSecond: number; mbPerSecond: number } {
  const bytes = readFileSync(path);
  const start = performance.now();
  const framer = framerOf(format);
  const decoder = decoderOf(format, { path });
  let out = emptyDecoded();
  let units = 0;
  for (let f = framer.next(bytes, 0); f; f = framer.next(bytes, f.next)) {
    decoder.decode(bytes, f.start, f.end, 0, out);
    if (out.events.length >= 1000) {
      units += out.units;
      out = emptyDecoded();
    }
  }
  units += out.units;
  const seconds = (performance.now() - start) / 1000;
  return { units, perSecond: units / seconds, mbPerSecond: bytes.length / MB / seconds };
}

function tailer(dir: string, patterns: string[], fromStart: boolean): { tailer: Tailer; store: SqliteStore } {
  const store = new SqliteStore(join(dir, `tail-${Math.random().toString(36).slice(2)}.db`), SERVICE_DETECTION, { backgroundCheckpoint: true });
  const pipeline = new Pipeline(store, new Counters(), createLogger(() => {}));
  const t = new Tailer({ patterns, fromStart, batch: 1000 }, pipelineSink(pipeline, store, 'default'), { notice: () => {}, rejected: () => {} });
  return { tailer: t, store };
}

/** `tail --from-start` of one file into a fresh database, until every unit is read. Returns units/s and MB/s. */
async function tailFromStart(dir: string, path: string): Promise<{ units: number; perSecond: number; mbPerSecond: number }> {
  const { tailer: t, store } = tailer(dir, [path], true);
  const start = performance.now();
  await t.start();
  await t.settled();
  const seconds = (performance.now() - start) / 1000;
  const { units, rejected } = t.totals();
  await t.stop();
  await store.close();
  if (rejected > 0) throw new Error(`${path}: ${rejected} units rejected`);
  return { units, perSecond: units / seconds, mbPerSecond: statSync(path).size / MB / seconds };
}

/** Clock ticks of user + system time a process has used (Linux /proc; 100 per second). */
function cpuTicks(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

/**
 * CPU of a real `cachebreak tail` process (all its threads, the database's
 * checkpointer included) following `pattern` once idle, as a share of one
 * core; undefined where /proc is missing.
 */
async function idleCpu(dir: string, pattern: string): Promise<number | undefined> {
  if (!existsSync('/proc/self/stat')) return undefined;
  const child = spawn(process.execPath, ['dist/cli.js', 'tail', '--db', join(dir, `idle-${Math.random()}.db`), '--from-start', join(dir, pattern)], { stdio: 'ignore' });
  try {
    // Start-up (module loading, the first read of every file) is not idle.
    await new Promise((resolve) => setTimeout(resolve, 4000));
    const before = cpuTicks(child.pid!);
    const started = performance.now();
    await new Promise((resolve) => setTimeout(resolve, IDLE_SECONDS * 1000));
    const ticks = cpuTicks(child.pid!) - before;
    return ((ticks * 10) / (performance.now() - started)) * 100;
  } finally {
    child.kill('SIGTERM');
  }
}

export async function benchTail(turns = 1_000_000): Promise<Row[]> {
  const dir = mkdtempSync(join(tmpdir(), 'cachebreak-bench-tail-'));
  try {
    const ndjson = join(dir, 'events.ndjson');
    ndjsonFile(ndjson, Math.min(turns, 200_000));
    const otel = join(dir, 'telemetry.log');
    outfile(otel, Math.max(1, Math.floor(Math.min(turns, 200_000) / 60)));
    const rows: Row[] = [];
    for (const [label, path, format, unit] of [
      ['NDJSON', ndjson, 'ndjson', 'lines/s'],
      ['OTel outfile', otel, 'otel-file', 'objects/s'],
    ] as const) {
      const size = (statSync(path).size / MB).toFixed(0);
      const baseline = { label: 'plain fs.read of the same file', value: plainRead(path) };
      const decoded = decodeOnly(path, format);
      const tailed = await tailFromStart(dir, path);
      rows.push(
        { figure: `tail ${label} from the start into a database (${size} MB)`, value: tailed.perSecond, unit },
        { figure: `tail ${label} from the start into a database (${size} MB)`, value: tailed.mbPerSecond, unit: 'MB/s', baseline },
        { figure: `${label} framing + decoding only (${size} MB)`, value: decoded.perSecond, unit },
        { figure: `${label} framing + decoding only (${size} MB)`, value: decoded.mbPerSecond, unit: 'MB/s', baseline },
      );
    }
    for (let i = 0; i < IDLE_FILES; i++) writeFileSync(join(dir, `idle-${i}.ndjson`), JSON.stringify(benchEvent(i, { turns: 100, start: 0, spanMs: 1, concurrency: 1 })) + '\n');
    const idle = await idleCpu(dir, 'idle-*.ndjson');
    const empty = await idleCpu(dir, 'nothing-*.ndjson');
    if (idle !== undefined && empty !== undefined) {
      rows.push({
        figure: `CPU of a cachebreak tail process following ${IDLE_FILES} idle files (${IDLE_SECONDS} s)`,
        value: idle,
        unit: '% of a core',
        baseline: { label: 'the same process following no file', value: empty },
        aim: '≈ 0 above the baseline (no busy polling)',
      });
    }
    return rows;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
