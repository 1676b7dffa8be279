// Crash safety: continuous ingest from several clients over every transport a
// harness uses — POST /v1/events, OTLP/HTTP protobuf logs and OTLP/gRPC logs,
// the latter two through the real OpenTelemetry exporters — then `kill -9` at
// a random moment, and a restart. Everything acknowledged must be there, the
// file must pass integrity_check, and every stored turn's state and whole
// break record must equal the reference evaluation of the same events in order.
import { Metadata } from '@grpc/grpc-js';
import { OTLPLogExporter as GrpcLogExporter } from '@opentelemetry/exporter-logs-otlp-grpc';
import { OTLPLogExporter as ProtoLogExporter } from '@opentelemetry/exporter-logs-otlp-proto';
import { logs } from '@opentelemetry/sdk-node';
import Database from 'better-sqlite3';
import { copyFileSync, existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { breakFingerprint } from '../../src/core/fingerprint.js';
import { SERVICE_DETECTION } from '../../src/prices/index.js';
import { evaluateEvents } from '../../src/core/stream.js';
import type { BreakRecord, TurnEvent } from '../../src/core/types.js';
import { postEvents, spawnServer, type ServerProcess } from '../e2e/process.js';
import { SEED_TOOLS, toWire, tools, turn, usage } from '../core/scenario.js';
import { Random } from '../fuzz/mutate.js';
import { nativeRecord } from '../otlp/native-record.js';

const SESSIONS = 6;

export type Transport = 'http' | 'otlp-http-protobuf' | 'otlp-grpc';

/** The clients of one trial: two over the JSON API, one per OTLP transport. */
const CLIENTS: readonly Transport[] = ['http', 'http', 'otlp-http-protobuf', 'otlp-grpc'];

/**
 * The exporters' deadline per export. Shorter than their first retry (0.8 s
 * at the earliest), so an export to the killed server fails at once instead
 * of retrying for 10 s; an export that misses it is just not acknowledged.
 */
const EXPORT_TIMEOUT_MS = 750;

interface StoredTurn {
  requestId: string;
  state: string | null;
  break: (Omit<BreakRecord, 'ts'> & { ts: string }) | null;
}

/** The i-th turn of the workload: sessions taking turns, a tool re-order now and then. */
function workloadTurn(i: number): TurnEvent {
  const session = i % SESSIONS;
  const step = Math.floor(i / SESSIONS);
  const reordered = step % 9 === 8;
  return turn(`t${i}`, {
    sessionId: `crash_${session}`,
    at: step * 20_000 + session * 1_000,
    tools: tools(reordered && step % 2 === 0 ? [...SEED_TOOLS].reverse() : SEED_TOOLS),
    usage: reordered ? usage(0, 30_000 + step) : usage(step === 0 ? 0 : 30_000, step === 0 ? 30_000 : 200),
  });
}

export interface TrialResult {
  /** Turns acknowledged in this trial, by transport. */
  acknowledged: Record<Transport, number>;
  /** Turns stored after the restart, from this trial and the ones before it. */
  stored: number;
  /** Acknowledged turns, from this trial and the ones before it. */
  acknowledgedInAll: number;
  /** Stored turns with a break, all checked field by field, by the transport that sent them. */
  breaks: Record<Transport, number>;
  killedAfterMs: number;
}

async function storedTurns(url: string): Promise<Map<string, StoredTurn>> {
  const all = new Map<string, StoredTurn>();
  for (let s = 0; s < SESSIONS; s++) {
    const response = await fetch(`${url}/v1/sessions/crash_${s}/turns`);
    if (response.status === 404) continue;
    if (response.status !== 200) throw new Error(`GET turns of crash_${s}: ${response.status} ${await response.text()}`);
    for (const t of ((await response.json()) as { turns: StoredTurn[] }).turns) all.set(t.requestId, t);
  }
  return all;
}

/** A break record as GET /v1/sessions/…/turns renders it: ts as RFC 3339, its cause's fingerprint, nothing undefined. */
function asStored(record: BreakRecord): unknown {
  return JSON.parse(JSON.stringify({ ...record, ts: new Date(record.ts).toISOString(), fingerprint: breakFingerprint(record) }));
}

/** Not a broken connection but a failed premise (a 200 that did not take every event, a record the SDK did not make): the trial stops. */
class Fatal extends Error {}

/** A client sending batches over one transport until stopped; returns what was acknowledged. */
type Send = (batch: TurnEvent[]) => Promise<boolean>;

interface Client {
  send: Send;
  close(): Promise<void>;
}

function httpClient(server: ServerProcess): Client {
  return {
    async send(batch) {
      const reply = await postEvents(server.url, batch.map(toWire));
      // 200 is the acknowledgement; every event of the batch must have been taken (none rejected).
      if (reply.status !== 200) return false;
      const counts = reply.body as { accepted: number; duplicates: number; rejected: unknown[] };
      if (counts.accepted + counts.duplicates !== batch.length || counts.rejected.length !== 0) {
        throw new Fatal(`POST /v1/events answered 200 but did not take the whole batch: ${reply.text.slice(0, 300)}`);
      }
      return true;
    },
    close: async () => {},
  };
}

/**
 * A client exporting native prompt_cache.turn log records through a real
 * OTLP exporter: the records are made by the SDK (a LoggerProvider), and the
 * exporter's own result (code 0) is the acknowledgement.
 */
function otlpClient(server: ServerProcess, transport: 'otlp-http-protobuf' | 'otlp-grpc'): Client {
  const exporter =
    transport === 'otlp-grpc'
      ? new GrpcLogExporter({ url: `http://127.0.0.1:${server.grpcPort}`, metadata: new Metadata(), timeoutMillis: EXPORT_TIMEOUT_MS })
      : new ProtoLogExporter({ url: `${server.url}/v1/logs`, timeoutMillis: EXPORT_TIMEOUT_MS });
  const memory = new logs.InMemoryLogRecordExporter();
  const provider = new logs.LoggerProvider({ processors: [new logs.SimpleLogRecordProcessor({ exporter: memory })] });
  const logger = provider.getLogger('cachebreak-crash', '1.0.0');
  return {
    async send(batch) {
      for (const event of batch) logger.emit({ ...nativeRecord(toWire(event)), timestamp: event.ts });
      const records = memory.getFinishedLogRecords();
      memory.reset();
      if (records.length !== batch.length) throw new Fatal(`the SDK made ${records.length} records of ${batch.length} events`);
      const result = await new Promise<{ code: number }>((resolve) => exporter.export(records, resolve));
      return result.code === 0;
    },
    async close() {
      await provider.shutdown();
      await exporter.shutdown();
    },
  };
}

/**
 * One trial on `db` (which may hold earlier trials' turns): ingest from every
 * client until a kill at a random moment, restart, and check. `next` is the
 * index of the first new turn; `sent` and `acknowledged` carry over between
 * trials, so every trial also re-checks what the earlier ones stored.
 */
export async function crashTrial(
  db: string,
  random: Random,
  next: { value: number },
  sent: Map<string, { event: TurnEvent; via: Transport }>,
  acknowledged: Set<string>,
): Promise<TrialResult> {
  let server: ServerProcess = await spawnServer(db);
  const counts: TrialResult['acknowledged'] = { http: 0, 'otlp-http-protobuf': 0, 'otlp-grpc': 0 };
  const clients = CLIENTS.map((channel) => ({ channel, client: channel === 'http' ? httpClient(server) : otlpClient(server, channel) }));
  let running = true;
  let fatal: Error | undefined;
  const sender = async ({ channel, client }: (typeof clients)[number]) => {
    while (running) {
      const batch = Array.from({ length: 1 + random.int(40) }, () => workloadTurn(next.value++));
      for (const event of batch) sent.set(event.requestId, { event, via: channel });
      let ok: boolean;
      try {
        ok = await client.send(batch);
      } catch (error) {
        if (error instanceof Fatal) {
          fatal ??= error;
          return;
        }
        ok = false; // the connection broke: the server is gone
      }
      if (ok) {
        for (const event of batch) acknowledged.add(event.requestId);
        counts[channel] += batch.length;
      } else if (running) {
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    }
  };
  const senders = clients.map(sender);
  const killedAfterMs = 50 + random.int(700);
  await new Promise((resolve) => setTimeout(resolve, killedAfterMs));
  await server.kill9();
  running = false;
  try {
    // Every send has an answer (or a failure) before anything is judged: an acknowledgement that
    // arrives after the kill still counts.
    await Promise.all(senders);
  } finally {
    await Promise.all(clients.map(({ client }) => client.close()));
  }
  if (fatal) throw fatal;

  // The file as the kill left it is checked on a copy (with its WAL), so that the restart below
  // finds it untouched and has to recover the WAL itself: a connection opened here would
  // recover it first, and checkpoint it away on close.
  integrityCheck(db, 'after kill -9', true);

  server = await spawnServer(db);
  let result: TrialResult;
  try {
    const stored = await storedTurns(server.url);
    const lost = [...acknowledged].filter((id) => !stored.has(id));
    if (lost.length > 0) throw new Error(`${lost.length} acknowledged turns lost, e.g. ${lost.slice(0, 5).join(', ')}`);
    const unknown = [...stored.keys()].filter((id) => !sent.has(id));
    if (unknown.length > 0) throw new Error(`stored turns nobody sent: ${unknown.slice(0, 5).join(', ')}`);
    // Stored may hold more than was acknowledged (committed, then killed before the answer, or an
    // export past its deadline): the reference evaluates exactly what is there, in order.
    const reference = evaluateEvents([...stored.keys()].map((id) => sent.get(id)!.event), SERVICE_DETECTION);
    if (reference.length !== stored.size) throw new Error(`${stored.size} turns stored, but the reference evaluates ${reference.length}`);
    const breaks: Record<Transport, number> = { http: 0, 'otlp-http-protobuf': 0, 'otlp-grpc': 0 };
    for (const expected of reference) {
      const got = stored.get(expected.requestId)!;
      const want = { state: expected.state, break: expected.break ? asStored(expected.break) : null };
      const have = { state: got.state, break: got.break };
      if (!isDeepStrictEqual(want, have)) {
        throw new Error(`${expected.requestId}: stored ${JSON.stringify(have)}, in-order evaluation ${JSON.stringify(want)}`);
      }
      if (have.break) breaks[sent.get(expected.requestId)!.via]++;
    }
    result = { acknowledged: counts, stored: stored.size, acknowledgedInAll: acknowledged.size, breaks, killedAfterMs };
  } finally {
    await server.stop();
  }
  // And once more after the restarted server's own recovery and clean stop.
  integrityCheck(db, 'after the restart', false);
  return result;
}

/** Throws unless PRAGMA integrity_check says ok: of the file itself, or of a copy of it and its WAL. */
function integrityCheck(db: string, when: string, onACopy: boolean): void {
  let path = db;
  if (onACopy) {
    path = `${db}.check`;
    for (const suffix of ['', '-wal']) {
      rmSync(`${path}${suffix}`, { force: true });
      if (existsSync(`${db}${suffix}`)) copyFileSync(`${db}${suffix}`, `${path}${suffix}`);
    }
    rmSync(`${path}-shm`, { force: true });
  }
  const sqlite = new Database(path, { fileMustExist: true });
  try {
    const integrity = sqlite.pragma('integrity_check', { simple: true });
    if (integrity !== 'ok') throw new Error(`integrity_check ${when}: ${String(integrity)}`);
  } finally {
    sqlite.close();
    if (onACopy) for (const suffix of ['', '-wal', '-shm']) rmSync(`${path}${suffix}`, { force: true });
  }
}

export async function crashTrials(dir: string, trials: number, seed: number): Promise<TrialResult[]> {
  const random = new Random(seed);
  const db = join(dir, 'crash.db');
  const sent = new Map<string, { event: TurnEvent; via: Transport }>();
  const acknowledged = new Set<string>();
  const next = { value: 0 };
  const results: TrialResult[] = [];
  for (let i = 0; i < trials; i++) results.push(await crashTrial(db, random, next, sent, acknowledged));
  return results;
}
