// Crash safety: continuous ingest from several clients, `kill -9` at a random
// moment, restart. Everything acknowledged must be there, the file must pass
// integrity_check, and what is stored must evaluate exactly as the reference
// evaluation of the same events in order.
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { DEFAULT_DETECTION } from '../../src/core/options.js';
import { evaluateEvents } from '../../src/core/stream.js';
import type { TurnEvent } from '../../src/core/types.js';
import { postEvents, spawnServer, type ServerProcess } from '../e2e/process.js';
import { SEED_TOOLS, toWire, tools, turn, usage } from '../core/scenario.js';
import { Random } from '../fuzz/mutate.js';

const SESSIONS = 6;
const SENDERS = 3;

interface Wire {
  turns: { requestId: string; state: string | null; break: { reason: string; previousRequestId: string } | null }[];
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
  acknowledged: number;
  stored: number;
  killedAfterMs: number;
}

async function storedTurns(url: string): Promise<Map<string, Wire['turns'][number]>> {
  const all = new Map<string, Wire['turns'][number]>();
  for (let s = 0; s < SESSIONS; s++) {
    const response = await fetch(`${url}/v1/sessions/crash_${s}/turns`);
    if (response.status === 404) continue;
    for (const t of ((await response.json()) as Wire).turns) all.set(t.requestId, t);
  }
  return all;
}

/**
 * One trial on `db` (which may hold earlier trials' turns): ingest from several
 * clients until a kill at a random moment, restart, and check. `next` is the
 * index of the first new turn; returns the checks' figures and the next index.
 */
export async function crashTrial(db: string, random: Random, next: { value: number }, sent: Map<string, TurnEvent>): Promise<TrialResult> {
  let server: ServerProcess = await spawnServer(db);
  const acknowledged = new Set<string>();
  let running = true;
  const sender = async () => {
    while (running) {
      const batch = Array.from({ length: 1 + random.int(40) }, () => workloadTurn(next.value++));
      for (const event of batch) sent.set(event.requestId, event);
      try {
        const reply = await postEvents(server.url, batch.map(toWire));
        if (reply.status === 200) for (const event of batch) acknowledged.add(event.requestId);
      } catch {
        return; // the server is gone
      }
    }
  };
  const senders = Array.from({ length: SENDERS }, sender);
  const killedAfterMs = 50 + random.int(700);
  await new Promise((resolve) => setTimeout(resolve, killedAfterMs));
  await server.kill9();
  running = false;
  await Promise.all(senders);

  const sqlite = new Database(db, { fileMustExist: true });
  const integrity = sqlite.pragma('integrity_check', { simple: true });
  sqlite.close();
  if (integrity !== 'ok') throw new Error(`integrity_check after kill -9: ${String(integrity)}`);

  server = await spawnServer(db);
  try {
    const stored = await storedTurns(server.url);
    const lost = [...acknowledged].filter((id) => !stored.has(id));
    if (lost.length > 0) throw new Error(`${lost.length} acknowledged turns lost, e.g. ${lost.slice(0, 5).join(', ')}`);
    const unknown = [...stored.keys()].filter((id) => !sent.has(id));
    if (unknown.length > 0) throw new Error(`stored turns nobody sent: ${unknown.slice(0, 5).join(', ')}`);
    // Stored may hold more than was acknowledged (committed, then killed before the answer): judge what is there.
    const reference = evaluateEvents([...stored.keys()].map((id) => sent.get(id)!), DEFAULT_DETECTION);
    for (const expected of reference) {
      const got = stored.get(expected.requestId)!;
      const want = { state: expected.state, reason: expected.break?.reason ?? null, previous: expected.break?.previousRequestId ?? null };
      const have = { state: got.state, reason: got.break?.reason ?? null, previous: got.break?.previousRequestId ?? null };
      if (JSON.stringify(want) !== JSON.stringify(have)) {
        throw new Error(`${expected.requestId}: stored ${JSON.stringify(have)}, in-order evaluation ${JSON.stringify(want)}`);
      }
    }
    return { acknowledged: acknowledged.size, stored: stored.size, killedAfterMs };
  } finally {
    await server.stop();
  }
}

export async function crashTrials(dir: string, trials: number, seed: number): Promise<TrialResult[]> {
  const random = new Random(seed);
  const db = join(dir, 'crash.db');
  const sent = new Map<string, TurnEvent>();
  const next = { value: 0 };
  const results: TrialResult[] = [];
  for (let i = 0; i < trials; i++) results.push(await crashTrial(db, random, next, sent));
  return results;
}
