// PostgreSQL figures: HTTP ingest into 1, 2 and 3 `serve` processes sharing
// one database (2 and 3 both with every node writing every session and with
// each session pinned to one node), each beside a raw COPY of the same rows into a table of the
// same shape (measured in the same run), with where the time goes: the CPU
// of the node processes and of the database's backends, and what the
// backends wait on. Then the dashboard endpoints on the database the 3-node
// run filled, beside the same endpoints on SQLite at the same size.
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { spawn } from 'node:child_process';
import { createPool } from '../../src/store/pg/client.js';
import { assertReachable, freshDatabase, type TestDatabase } from '../pg.js';
import { percentile, type Row } from './lib.js';
import { BATCH, ingestOverHttp, RAW_COLUMNS, rawValues } from './ingest.js';
import { endpointFigure, endpointLatencies } from './queries.js';
import { startServerProcess, type ServerProcess } from './server-process.js';
import { benchBatch, type WorkloadOptions } from './workload.js';

const NODE_COUNTS = [1, 2, 3];
/** Connections each node opens: 3 nodes stay far below the server's 100. */
const PG_POOL = 4;
const POOL_ARGS = ['--pg-pool', String(PG_POOL)];
/** The ingest curve is measured on at most this many turns per node count; the 3-node database is then filled to the size. */
const CURVE_TURNS = 1_000_000;
const CLOCK_TICKS = 100;

/** CPU seconds (user + system) a process has used, or 0 once it is gone. */
function cpuSeconds(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return 0;
  }
}

/** The same rows through COPY … FROM STDIN into a table of the raw baseline's shape, 1,000 a batch. */
async function rawCopy(options: WorkloadOptions): Promise<number> {
  const database = await freshDatabase('benchcopy');
  const sql = createPool(database.url, { max: 1, connectTimeout: 5 });
  try {
    await sql.unsafe(`CREATE TABLE turns (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, request_id text, session_id text, agent_id text,
      ts bigint, end_ts bigint, model text, provider text, uncached bigint, read bigint, write bigint, output bigint)`);
    const batches = Array.from({ length: options.turns / BATCH }, (_, b) =>
      benchBatch(b * BATCH, BATCH, options)
        .map((e) => rawValues(e).join('\t') + '\n')
        .join(''),
    );
    // psql's COPY FROM STDIN: the database's fastest way in, whatever driver the store uses.
    const start = performance.now();
    const psql = spawn('psql', [database.url, '-v', 'ON_ERROR_STOP=1', '-c', `COPY turns (${RAW_COLUMNS.join(', ')}) FROM STDIN`], { stdio: ['pipe', 'ignore', 'inherit'] });
    const exited = new Promise<number | null>((resolve, reject) => psql.once('error', reject).once('exit', resolve));
    for (const text of batches) if (!psql.stdin.write(text)) await new Promise((resolve) => psql.stdin.once('drain', resolve));
    psql.stdin.end();
    const code = await exited;
    if (code !== 0) throw new Error(`psql COPY exited with ${code}`);
    return (options.turns * 1000) / (performance.now() - start);
  } finally {
    await sql.end();
    await database.drop();
  }
}

/** CPU seconds the whole machine has been busy (every process, all cores). */
function machineBusySeconds(): number {
  const [, user, nice, system, , , irq, softirq] = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).map(Number);
  return (user! + nice! + system! + irq! + softirq!) / CLOCK_TICKS;
}

interface Load {
  /** CPU seconds per wall second of the whole machine, of this process (the load generator), of the node processes together. */
  machineCores: number;
  generatorCores: number;
  nodeCores: number;
  /** CPU seconds per wall second of the database's backends. */
  backendCores: number;
  /** Active backends on average, by what they were waiting on ('CPU' when on no wait event). */
  waits: Map<string, number>;
}

/** Samples the database's backends every 100 ms, and the CPU of `pids` and of the backends, until stopped. */
function watchLoad(url: string, pids: number[]): { stop(): Promise<Load> } {
  const sql = createPool(url, { max: 1, connectTimeout: 5 });
  const name = new URL(url).pathname.slice(1);
  const backendsAtStart = new Map<number, number>();
  const nodesAtStart = pids.map(cpuSeconds);
  const machineAtStart = machineBusySeconds();
  const generatorAtStart = process.cpuUsage();
  const waits = new Map<string, number>();
  let samples = 0;
  let stopped = false;
  const start = performance.now();
  const loop = (async () => {
    for (const { pid } of await sql<{ pid: number }[]>`SELECT pid FROM pg_stat_activity WHERE datname = ${name} AND pid <> pg_backend_pid()`) {
      backendsAtStart.set(pid, cpuSeconds(pid));
    }
    // Bounded by the ingest it watches: stop() ends it.
    while (!stopped) {
      const active = await sql<{ wait: string }[]>`
        SELECT coalesce(wait_event_type || ':' || wait_event, 'CPU') AS wait FROM pg_stat_activity
        WHERE datname = ${name} AND state = 'active' AND pid <> pg_backend_pid()`;
      samples++;
      for (const { wait } of active) waits.set(wait, (waits.get(wait) ?? 0) + 1);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  })();
  return {
    async stop() {
      const seconds = (performance.now() - start) / 1000;
      const nodeCores = pids.reduce((sum, pid, i) => sum + cpuSeconds(pid) - nodesAtStart[i]!, 0) / seconds;
      const machineCores = (machineBusySeconds() - machineAtStart) / seconds;
      const generator = process.cpuUsage(generatorAtStart);
      const generatorCores = (generator.user + generator.system) / 1e6 / seconds;
      const backends = await sql<{ pid: number }[]>`SELECT pid FROM pg_stat_activity WHERE datname = ${name} AND pid <> pg_backend_pid()`;
      const backendCores = backends.reduce((sum, { pid }) => sum + cpuSeconds(pid) - (backendsAtStart.get(pid) ?? 0), 0) / seconds;
      stopped = true;
      await loop;
      await sql.end();
      return { machineCores, generatorCores, nodeCores, backendCores, waits: new Map([...waits].map(([wait, n]) => [wait, n / Math.max(1, samples)])) };
    },
  };
}

async function startNodes(url: string, count: number): Promise<ServerProcess[]> {
  return Promise.all(Array.from({ length: count }, () => startServerProcess(url, POOL_ARGS)));
}

export interface SqliteBeside {
  /** HTTP ingest into one SQLite server of the same workload, turns/s. */
  ingest: number;
  /** Endpoint latencies on the SQLite database of the same size. */
  latencies: Map<string, number[]>;
}

/** Every PostgreSQL figure at `options.turns`, beside SQLite's figures measured in the same run. */
export async function benchPostgres(options: WorkloadOptions, sqlite: SqliteBeside): Promise<Row[]> {
  await assertReachable();
  const curve = { ...options, turns: Math.min(options.turns, CURVE_TURNS) };
  const size = `${(curve.turns / 1e6).toLocaleString('en-US')}M turns`;
  const copy = await rawCopy(curve);
  const rows: Row[] = [];
  let filled: TestDatabase | undefined;
  try {
    // Spread: every node writes every session (its per-session locks are
    // shared); pinned: each session's events to one node. The 3-node spread
    // run's database is filled to the size for the reads.
    const runs = NODE_COUNTS.flatMap((count) => (count === 1 ? [{ count, routing: 'spread' as const }] : [{ count, routing: 'pinned' as const }, { count, routing: 'spread' as const }]));
    for (const { count, routing } of runs) {
      const database = await freshDatabase(`bench${count}${routing}`);
      const nodes = await startNodes(database.url, count);
      const urls = nodes.map((n) => n.url);
      try {
        const load = watchLoad(database.url, nodes.map((n) => n.child.pid!));
        const rate = await ingestOverHttp(urls, curve, 0, routing);
        const { machineCores, generatorCores, nodeCores, backendCores, waits } = await load.stop();
        const how = count === 1 ? '' : routing === 'spread' ? ', every node writing every session' : ', each session pinned to one node';
        const label = `HTTP ingest into PostgreSQL, ${count} serve node${count > 1 ? 's' : ''}${how} (${size})`;
        rows.push({ figure: label, value: rate, unit: 'turns/s', baseline: { label: 'raw COPY of the same rows', value: copy } });
        rows.push({ figure: `${label}: CPU of the nodes`, value: nodeCores, unit: 'cores' });
        rows.push({ figure: `${label}: CPU of PostgreSQL's backends`, value: backendCores, unit: 'cores' });
        rows.push({ figure: `${label}: CPU of the load generator`, value: generatorCores, unit: 'cores' });
        rows.push({ figure: `${label}: CPU of the whole machine (every process)`, value: machineCores, unit: 'cores', aim: `of ${cpus().length}` });
        const top = [...waits].sort((x, y) => y[1] - x[1]).slice(0, 3);
        for (const [wait, active] of top) rows.push({ figure: `${label}: backends active on ${wait}`, value: active, unit: 'on average' });
        if (count === NODE_COUNTS.at(-1) && routing === 'spread') {
          if (options.turns > curve.turns) {
            const fill = await ingestOverHttp(urls, { ...options, turns: options.turns - curve.turns }, curve.turns);
            rows.push({ figure: `HTTP ingest into PostgreSQL, ${count} serve nodes, from ${size} to ${(options.turns / 1e6).toLocaleString('en-US')}M`, value: fill, unit: 'turns/s' });
          }
          filled = database;
        }
      } finally {
        await Promise.all(nodes.map((n) => n.stop()));
        if (filled !== database) await database.drop();
      }
    }
    rows.push({ figure: `HTTP ingest into SQLite, 1 serve node (${(options.turns / 1e6).toLocaleString('en-US')}M turns, same run)`, value: sqlite.ingest, unit: 'turns/s' });
    const latencies = await endpointLatencies(filled!.url, options, POOL_ARGS);
    for (const [name, measured] of latencies) {
      const figure = `PostgreSQL: ${endpointFigure(name, options.turns)}`;
      const onSqlite = sqlite.latencies.get(name)!;
      rows.push({ figure: `${figure}: p50`, value: percentile(measured, 50), unit: 'ms', baseline: { label: 'SQLite, p50', value: percentile(onSqlite, 50) } });
      rows.push({ figure: `${figure}: p95`, value: percentile(measured, 95), unit: 'ms', aim: '< 50 ms at 10M', baseline: { label: 'SQLite, p95', value: percentile(onSqlite, 95) } });
    }
  } finally {
    await filled?.drop();
  }
  return rows;
}
