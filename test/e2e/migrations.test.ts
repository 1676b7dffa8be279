// The server creates and migrates its database on start, applies nothing the
// second time, and upgrades a database written by an earlier release.
import Database from 'better-sqlite3';
import { copyFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers.js';
import { breaksOf, sessionsOf, turnsOf } from './api.js';
import { openaiBreak, REALISTIC_TURNS, SEED_TOOLS, seedBreak, splitTurn } from './events.js';
import { postEvents, request, startServer } from './server.js';

const JOURNAL = JSON.parse(readFileSync(new URL('../../migrations/meta/_journal.json', import.meta.url), 'utf8')) as {
  entries: { tag: string; when: number }[];
};
const FIXTURE_V0_1_0 = new URL('../fixtures/db/v0.1.0.db', import.meta.url);

interface AppliedMigration {
  hash: string;
  created_at: number;
}

/** drizzle's record of applied migrations, read with the server stopped. */
function appliedMigrations(db: string): AppliedMigration[] {
  const sqlite = new Database(db, { readonly: true, fileMustExist: true });
  try {
    const table = sqlite.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name = '__drizzle_migrations'").get();
    if (!table) return [];
    return sqlite.prepare<[], AppliedMigration>('SELECT hash, created_at FROM __drizzle_migrations ORDER BY created_at').all();
  } finally {
    sqlite.close();
  }
}

function integrity(db: string): unknown {
  const sqlite = new Database(db, { readonly: true, fileMustExist: true });
  try {
    return sqlite.pragma('integrity_check', { simple: true });
  } finally {
    sqlite.close();
  }
}

describe('migrations against a real server', () => {
  it('a new database is created and migrated; a second start applies nothing', async () => {
    const db = join(tempDir(), 'new.db');
    const first = await startServer({ db });
    expect(await sessionsOf(first.url)).toEqual([]);
    expect(await first.stop()).toEqual({ code: 0, signal: null });
    const applied = appliedMigrations(db);
    expect(applied).toHaveLength(JOURNAL.entries.length);
    expect(applied.map((m) => m.created_at)).toEqual(JOURNAL.entries.map((e) => e.when));

    const second = await startServer({ db });
    // A request first: a SIGTERM right after the listening line is another
    // test's subject (restart.test.ts).
    expect((await request(second.url, '/readyz')).status).toBe(200);
    expect(await second.stop()).toEqual({ code: 0, signal: null });
    expect(appliedMigrations(db)).toEqual(applied);
  });

  // v0.1.0 predates 0001_drop_totals (and every later migration): starting on
  // it must apply them and keep serving its data.
  it('a database written by v0.1.0 is upgraded to the current schema and its data served', async () => {
    const db = join(tempDir(), 'v0.1.0.db');
    // A copy: the committed fixture must stay as the old release left it.
    copyFileSync(FIXTURE_V0_1_0, db);
    const before = appliedMigrations(db);
    expect(before).toHaveLength(1);
    expect(JOURNAL.entries.length).toBeGreaterThan(before.length);

    const server = await startServer({ db });
    // Its turns were judged by detection v1: they are evaluated again under v2 before the server listens.
    expect(server.stderrLines.some((line) => / event=reevaluation_started why=/.test(line))).toBe(true);
    expect(server.stderrLines.some((line) => / event=reevaluation_done streams=2 breaksChanged=2 /.test(line))).toBe(true);
    for (const [sessionId, rows] of Object.entries(REALISTIC_TURNS)) {
      const turns = await turnsOf(server.url, sessionId);
      expect(turns.map((t) => [t.requestId, t.state, t.usage?.uncached, t.usage?.read, t.usage?.write])).toEqual(rows);
    }
    expect(await breaksOf(server.url)).toEqual([openaiBreak(), seedBreak()]);
    expect((await sessionsOf(server.url)).map((s) => [s.sessionId, s.turns, s.breaks])).toEqual([
      ['sess_B', 3, 1],
      ['sess_A', 4, 1],
    ]);

    // The old stream goes on: a new turn is compared with the old req_04.
    const { snapshot, usage } = splitTurn('sess_A', { requestId: 'req_05', at: 40, tools: SEED_TOOLS, read: 0, write: 49_600 });
    expect((await postEvents(server.url, [snapshot, usage])).body).toEqual({ accepted: 2, duplicates: 0, rejected: [] });
    const latest = (await turnsOf(server.url, 'sess_A')).at(-1);
    expect(latest?.break).toMatchObject({ requestId: 'req_05', previousRequestId: 'req_04', reason: 'tools_order_changed' });

    expect(await server.stop()).toEqual({ code: 0, signal: null });
    const after = appliedMigrations(db);
    expect(after).toHaveLength(JOURNAL.entries.length);
    // What v0.1.0 applied is kept as it was; only newer migrations were added.
    expect(after.slice(0, before.length)).toEqual(before);
    expect(integrity(db)).toBe('ok');

    // Evaluated once: the next start has nothing to do.
    const again = await startServer({ db });
    expect((await request(again.url, '/readyz')).status).toBe(200);
    expect(await again.stop()).toEqual({ code: 0, signal: null });
    expect(again.stderrLines.some((line) => / event=reevaluation_/.test(line))).toBe(false);
  });
});
