// A 200 means stored: a server killed with SIGKILL right after answering loses
// none of the events it acknowledged, and leaves a sound database (a SQLite
// file that passes its integrity check; a PostgreSQL database read by a new
// connection).
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { freshDb, isPostgresUrl, openStore } from '../store-under-test.js';
import { sessionsOf, turnsOf } from './api.js';
import { splitTurn, type WireEvent } from './events.js';
import { postEvents, startServer } from './server.js';

const ROUNDS = 5;
const TURNS_PER_ROUND = 25;
const SESSION = 'sess_K';

/** Round `round`'s requests: a warm Claude Code stream, one turn every 10 s. */
function batch(round: number): { events: WireEvent[]; requestIds: string[] } {
  const requestIds: string[] = [];
  const events = Array.from({ length: TURNS_PER_ROUND }, (_, i) => {
    const n = round * TURNS_PER_ROUND + i;
    const requestId = `k_${String(n).padStart(3, '0')}`;
    requestIds.push(requestId);
    const { snapshot, usage } = splitTurn(SESSION, { requestId, at: n * 10, read: n === 0 ? 0 : 50_000, write: n === 0 ? 50_000 : 500 });
    return [snapshot, usage];
  }).flat();
  return { events, requestIds };
}

/** How many of `requestIds` are stored with a state, read after the process is dead. */
async function inspect(db: string, requestIds: readonly string[]) {
  if (isPostgresUrl(db)) {
    const store = await openStore(db);
    const ids = new Set(requestIds);
    const stored = ((await store.sessionTurns('default', SESSION)) ?? []).filter((t) => t.state !== null && ids.has(t.requestId)).length;
    await store.close();
    return { integrity: 'ok', stored };
  }
  // Read-only, so that the next server start is the one that recovers the WAL.
  const sqlite = new Database(db, { readonly: true, fileMustExist: true });
  try {
    const integrity = sqlite.pragma('integrity_check', { simple: true });
    const placeholders = requestIds.map(() => '?').join(',');
    const stored = sqlite
      .prepare<string[], { n: number }>(`SELECT count(*) AS n FROM turns WHERE state IS NOT NULL AND request_id IN (${placeholders})`)
      .get(...requestIds)!.n;
    return { integrity, stored };
  } finally {
    sqlite.close();
  }
}

describe('kill -9 against a real server', () => {
  it(`loses no acknowledged event over ${ROUNDS} kills right after a 200`, async () => {
    const db = await freshDb();
    const acknowledged: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const server = await startServer({ db });
      // What the previous rounds acknowledged survived the kill and the restart.
      if (round > 0) expect((await turnsOf(server.url, SESSION)).map((t) => t.requestId)).toEqual(acknowledged);

      const { events, requestIds } = batch(round);
      const reply = await postEvents(server.url, events);
      expect(reply.status).toBe(200);
      expect(reply.body).toEqual({ accepted: events.length, duplicates: 0, rejected: [] });
      expect(await server.kill9()).toEqual({ code: null, signal: 'SIGKILL' });
      acknowledged.push(...requestIds);

      expect(await inspect(db, acknowledged), `after kill ${round + 1}`).toEqual({ integrity: 'ok', stored: acknowledged.length });
    }

    const last = await startServer({ db });
    const turns = await turnsOf(last.url, SESSION);
    expect(turns.map((t) => t.requestId)).toEqual(acknowledged);
    expect(turns.map((t) => t.state)).toEqual(['cold', ...Array<string>(acknowledged.length - 1).fill('hit')]);
    expect((await sessionsOf(last.url)).map((s) => [s.sessionId, s.turns, s.breaks])).toEqual([[SESSION, ROUNDS * TURNS_PER_ROUND, 0]]);
  });
});
