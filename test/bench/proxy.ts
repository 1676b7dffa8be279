// What the provider proxy adds to a model call: the same streamed Anthropic
// call, made directly to a local mock upstream and through `cachebreak proxy`
// (its own process, storing every call), in the same run. Latency is time to
// the whole answer, one call at a time (direct and proxied calls taking
// turns); throughput is calls per second with CONCURRENCY in flight, over
// rounds in which direct calls, proxied calls and proxied calls with the
// database stalled (another process holding its write lock, which must cost
// the calls nothing) take turns, so that a change in the machine's load falls
// on all three alike rather than on whichever was measured last. Two
// upstreams: one that streams like a fast model (first event after 10 ms,
// then an event per ms), the case the aims are set for; and one that answers
// at once, which measures what the proxy costs per call (forwarding, hashing
// the request, storing the turn) when nothing hides it. And latency is
// measured again while the main port ingests batches of events without
// pause: writing them must not hold up the calls.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { once } from 'node:events';
import { Agent, createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { percentile, type Row } from './lib.js';
import { startServerProcess } from './server-process.js';
import { benchBatch, type WorkloadOptions } from './workload.js';

const CONCURRENCY = 16;
/** Throughput is measured in rounds (direct, proxied, proxied with the database stalled), so that all three see the machine alike. */
const ROUNDS = 4;
const ROUND_SECONDS = 2.5;
/** A pause after each stall, for the turns it held back to be written. */
const DRAIN_MS = 1_000;
/** Calls measured each way while the main port ingests. */
const CALLS_WHILE_INGESTING = 300;
/** Events per request of the main port's ingest: a busy exporter's batch. */
const INGEST_BATCH = 2_000;

interface Upstream {
  name: string;
  /** Calls measured one at a time, each way. */
  calls: number;
  firstEventMs: number;
  eventGapMs: number;
}

const UPSTREAMS: Upstream[] = [
  { name: 'model-like upstream (first event at 10 ms, then 1 per ms)', calls: 1_000, firstEventMs: 10, eventGapMs: 1 },
  { name: 'upstream answering at once', calls: 2_000, firstEventMs: 0, eventGapMs: 0 },
];

/** A request of a coding agent mid-session: 12 tools, a system prompt, 40 messages (~40 KB). */
function requestBody(): string {
  const tools = Array.from({ length: 12 }, (_, i) => ({ name: `tool_${i}`, description: 'd'.repeat(400), input_schema: { type: 'object', properties: { path: { type: 'string' } } } }));
  const messages = Array.from({ length: 40 }, (_, i) => ({ role: i % 2 === 0 ? 'user' : 'assistant', content: [{ type: 'text', text: `message ${i} `.repeat(60) }] }));
  return JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 1024, stream: true, system: [{ type: 'text', text: 's'.repeat(8_000), cache_control: { type: 'ephemeral' } }], tools, messages });
}

/** An Anthropic event stream of 20 text deltas with usage in message_start and message_delta. */
function answer(): string[] {
  const event = (type: string, data: unknown) => `event: ${type}\ndata: ${JSON.stringify(data)}\n\n`;
  return [
    event('message_start', { type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', content: [], usage: { input_tokens: 40, cache_creation_input_tokens: 200, cache_read_input_tokens: 30_000, output_tokens: 1 } } }),
    event('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
    ...Array.from({ length: 20 }, () => event('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'word ' } })),
    event('content_block_stop', { type: 'content_block_stop', index: 0 }),
    event('message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 20 } }),
    event('message_stop', { type: 'message_stop' }),
  ];
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Another process holds the database's write lock (BEGIN EXCLUSIVE) until the returned function is called. */
async function stallDatabase(db: string): Promise<() => Promise<void>> {
  const holder = spawn(
    process.execPath,
    ['-e', `const D=require('better-sqlite3');const d=new D(process.argv[1]);d.exec('BEGIN EXCLUSIVE');console.log('held');process.stdin.resume().on('end',()=>{d.exec('ROLLBACK');d.close()})`, db],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  await new Promise<void>((resolve, reject) => {
    createInterface({ input: holder.stdout! }).once('line', () => resolve());
    holder.once('exit', (code) => reject(new Error(`the lock holder exited (${code})`)));
  });
  return async () => {
    const exited = once(holder, 'exit');
    holder.stdin!.end();
    await exited;
  };
}

function call(agent: Agent, port: number, path: string, body: string): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method: 'POST', path, agent, headers: { 'content-type': 'application/json', 'x-api-key': 'bench' } }, (res) => {
      res.on('data', () => {});
      res.on('end', () => (res.statusCode === 200 ? resolve(performance.now() - started) : reject(new Error(`${path} answered ${res.statusCode}`))));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Calls made with CONCURRENCY in flight for a round, and how long they took. */
async function round(agent: Agent, port: number, path: string, body: string): Promise<{ calls: number; ms: number }> {
  const end = performance.now() + ROUND_SECONDS * 1000;
  let calls = 0;
  const worker = async () => {
    while (performance.now() < end) {
      await call(agent, port, path, body);
      calls++;
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return { calls, ms: performance.now() - started };
}

/** A rate over all rounds: their calls over their time. */
class Rate {
  private calls = 0;
  private ms = 0;
  add(measured: { calls: number; ms: number }): void {
    this.calls += measured.calls;
    this.ms += measured.ms;
  }
  get perSecond(): number {
    return (this.calls * 1000) / this.ms;
  }
}

/** The ingest benchmark's workload (64 sessions at once) over the last hour, for POST /v1/events as NDJSON. */
const INGEST_WORKLOAD: WorkloadOptions = { turns: 1_000_000, start: Date.now() - 3_600_000, spanMs: 3_600_000, concurrency: 64 };

/** Posts batches to the main port, one after another, until `stop` resolves; returns how many were stored. */
async function ingestUntil(url: string, stop: Promise<void>): Promise<number> {
  let stopped = false;
  void stop.then(() => (stopped = true));
  const agent = new Agent({ keepAlive: true });
  const { hostname, port } = new URL(url);
  let batches = 0;
  try {
    while (!stopped) {
      const status = await new Promise<number>((resolve, reject) => {
        const req = request({ host: hostname, port, method: 'POST', path: '/v1/events', agent, headers: { 'content-type': 'application/x-ndjson' } }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        });
        req.on('error', reject);
        req.end(benchBatch(batches * INGEST_BATCH, INGEST_BATCH, INGEST_WORKLOAD).map((event) => JSON.stringify(event)).join('\n'));
      });
      if (status !== 200) throw new Error(`the main port answered ${status} to a batch`);
      batches++;
    }
  } finally {
    agent.destroy();
  }
  return batches;
}

/** The added latency p99 of calls made one at a time (interleaved with direct ones) while the main port ingests. */
async function latencyWhileIngesting(upstream: Upstream, url: string, agent: Agent, upstreamPort: number, proxyPort: number, body: string): Promise<Row> {
  const direct: number[] = [];
  const proxied: number[] = [];
  let calledAll!: () => void;
  const ingesting = ingestUntil(url, new Promise<void>((resolve) => (calledAll = resolve)));
  try {
    for (let i = 0; i < CALLS_WHILE_INGESTING; i++) {
      direct.push(await call(agent, upstreamPort, '/v1/messages', body));
      proxied.push(await call(agent, proxyPort, '/anthropic/v1/messages', body));
    }
  } finally {
    calledAll();
  }
  const batches = await ingesting;
  return {
    figure: `proxy while the main port ingests ${INGEST_BATCH.toLocaleString('en')}-event batches without pause (${batches} stored), ${upstream.name}: added latency p99 of a streamed call`,
    value: percentile(proxied, 99) - percentile(direct, 99),
    unit: 'ms',
    baseline: { label: 'direct call p99 meanwhile', value: percentile(direct, 99) },
    aim: '—',
  };
}

async function measure(upstream: Upstream): Promise<Row[]> {
  const events = answer();
  const whole = events.join('');
  const mock = createServer((req, res) => {
    req.resume();
    req.on('end', async () => {
      if (upstream.firstEventMs === 0) {
        res.writeHead(200, { 'content-type': 'text/event-stream' }).end(whole);
        return;
      }
      await sleep(upstream.firstEventMs);
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (const event of events) {
        res.write(event);
        await sleep(upstream.eventGapMs);
      }
      res.end();
    });
  });
  mock.listen(0, '127.0.0.1');
  await once(mock, 'listening');
  const upstreamPort = (mock.address() as AddressInfo).port;
  const dir = mkdtempSync(join(tmpdir(), 'cachebreak-proxy-'));
  const server = await startServerProcess(join(dir, 'proxy.db'), ['--proxy-port', '0', '--anthropic-upstream', `http://127.0.0.1:${upstreamPort}`], 'proxy');
  const proxyPort = Number(new URL(server.proxyUrl!).port);
  const body = requestBody();
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  try {
    const direct: number[] = [];
    const proxied: number[] = [];
    for (let i = 0; i < 50; i++) await Promise.all([call(agent, upstreamPort, '/v1/messages', body), call(agent, proxyPort, '/anthropic/v1/messages', body)]);
    // Interleaved, one at a time: both see the same machine state.
    for (let i = 0; i < upstream.calls; i++) {
      direct.push(await call(agent, upstreamPort, '/v1/messages', body));
      proxied.push(await call(agent, proxyPort, '/anthropic/v1/messages', body));
    }
    const [directRate, proxiedRate, stalledRate] = [new Rate(), new Rate(), new Rate()];
    for (let i = 0; i < ROUNDS; i++) {
      directRate.add(await round(agent, upstreamPort, '/v1/messages', body));
      proxiedRate.add(await round(agent, proxyPort, '/anthropic/v1/messages', body));
      const release = await stallDatabase(join(dir, 'proxy.db'));
      try {
        stalledRate.add(await round(agent, proxyPort, '/anthropic/v1/messages', body));
      } finally {
        await release();
      }
      // What the stall held back is written now: not during the next round's direct calls.
      await sleep(DRAIN_MS);
    }
    const added = (p: number) => percentile(proxied, p) - percentile(direct, p);
    const model = upstream.firstEventMs > 0;
    const ingestRows = model ? [await latencyWhileIngesting(upstream, server.url, agent, upstreamPort, proxyPort, body)] : [];
    return [
      { figure: `proxy, ${upstream.name}: added latency p50 of a streamed call`, value: added(50), unit: 'ms', baseline: { label: 'direct call p50', value: percentile(direct, 50) }, aim: model ? '—' : '— (cost per call)' },
      { figure: `proxy, ${upstream.name}: added latency p99 of a streamed call`, value: added(99), unit: 'ms', baseline: { label: 'direct call p99', value: percentile(direct, 99) }, aim: model ? '≤ 2 ms' : '—' },
      { figure: `proxy, ${upstream.name}: streamed calls per second, ${CONCURRENCY} in flight`, value: proxiedRate.perSecond, unit: 'calls/s', baseline: { label: 'direct to the same upstream', value: directRate.perSecond }, aim: model ? '≥ 0.9× direct' : '—' },
      {
        figure: `proxy with the database stalled (another process holds its write lock), ${upstream.name}: streamed calls per second, ${CONCURRENCY} in flight`,
        value: stalledRate.perSecond,
        unit: 'calls/s',
        baseline: { label: 'direct to the same upstream', value: directRate.perSecond },
        aim: model ? '≥ 0.9× direct' : '—',
      },
      ...ingestRows,
    ];
  } finally {
    agent.destroy();
    await server.stop();
    mock.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Every call: a 41 KB request (12 tools, 40 messages) and a 26-event SSE answer, stored as a turn. */
export async function benchProxy(): Promise<Row[]> {
  const rows: Row[] = [];
  for (const upstream of UPSTREAMS) rows.push(...(await measure(upstream)));
  return rows;
}
