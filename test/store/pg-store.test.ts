// The PostgreSQL store against SQLite's on real databases: the same events in
// the same batches leave the same tables; several stores on one database
// writing one workload's events at once, shuffled across them, leave what one
// store writing them in order leaves; keys and tail checkpoints are shared;
// stores opening an empty database at once migrate it once.
import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SERVICE_DETECTION } from '../../src/prices/index.js';
import { DatabaseUnusable } from '../../src/store/db.js';
import { PG_MIGRATIONS_FOLDER } from '../../src/store/pg/db.js';
import { PgStore } from '../../src/store/pg/store.js';
import { freshDatabase, type TestDatabase } from '../pg.js';
import { freshStore } from '../helpers.js';
import { deliveryArbs, eventsOf, requestArb, shuffled } from './random-workload.js';
import { T0 } from '../core/scenario.js';
import { pgTables, sqliteTables } from './stored-tables.js';

let db: TestDatabase;
const opened: PgStore[] = [];

async function open(url = db.url): Promise<PgStore> {
  const store = await PgStore.open(url, SERVICE_DETECTION, { pool: 2 });
  opened.push(store);
  return store;
}

beforeAll(async () => {
  db = await freshDatabase('pgstore');
});

afterAll(async () => {
  for (const store of opened.splice(0)) await store.close();
  await db.drop();
});

describe('PostgreSQL store', () => {
  it('stores what SQLite stores for any order, batching and repetition of events', async () => {
    const pg = await open();
    let run = 0;
    await fc.assert(
      fc.asyncProperty(...deliveryArbs, async (requests, randomness, duplicates, batchSize) => {
        const sent = shuffled(eventsOf(requests), randomness, duplicates);
        const project = `run${run++}`;
        const sqlite = freshStore();
        for (let i = 0; i < sent.length; i += batchSize) {
          const batch = [{ project, events: sent.slice(i, i + batchSize) }];
          const [a, b] = [await sqlite.write(batch), await pg.write(batch)];
          expect(b).toEqual(a);
        }
        expect(await pgTables(pg, project)).toEqual(sqliteTables(sqlite, project));
        await sqlite.close();
      }),
      { numRuns: 60 },
    );
  });

  it("gives the in-order result when several stores write one stream's events at once, shuffled across them", async () => {
    const stores = [await open(), await open(), await open()];
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(requestArb, { minLength: 4, maxLength: 24 }),
        fc.infiniteStream(fc.nat()),
        async (requests, randomness) => {
          const events = eventsOf(requests);
          const project = `shared${run++}`;
          // In order, one event per write, by one SQLite store.
          const sqlite = freshStore();
          for (const event of events) await sqlite.write([{ project, events: [event] }]);
          // Shuffled, dealt to three stores that each write theirs one or two at a time, all at once.
          const dealt: (typeof events)[] = [[], [], []];
          for (const event of events.map((e) => ({ e, k: randomness.next().value })).sort((a, b) => a.k - b.k).map((x) => x.e)) {
            dealt[randomness.next().value % 3]!.push(event);
          }
          await Promise.all(
            stores.map(async (store, i) => {
              const mine = dealt[i]!;
              for (let j = 0; j < mine.length; j += 2) await store.write([{ project, events: mine.slice(j, j + 2) }]);
            }),
          );
          const [pg, reference] = [await pgTables(stores[0]!, project), sqliteTables(sqlite, project)];
          // Every table, but what depends on arrival order in any store: a stream that a turn only passed
          // through (its usage named no agent, its snapshot then another) is left empty or never made.
          const decided = (t: typeof pg) => ({
            ...t,
            streams: t.streams.filter((row) => row.first_ts !== null),
          });
          expect(decided(pg)).toEqual(decided(reference));
          await sqlite.close();
        },
      ),
      { numRuns: 25 },
    );
  });

  it('prunes as SQLite prunes, also when two stores prune at once, and re-evaluates to the same tables', async () => {
    // Retention and re-evaluation cover every project: a database of this test's own.
    const own = await freshDatabase('pgprune');
    const [a, b] = [await open(own.url), await open(own.url)];
    const sqlite = freshStore();
    const events = eventsOf(fc.sample(requestArb, { numRuns: 60, seed: 11 }));
    const points = [0, 1, 2].map((i) => ({
      series: 'claude_code.token.usage|input', source: 'claude_code', model: 'claude-sonnet-4-5', kind: 'input',
      temporality: 'cumulative' as const, startMs: T0, timeMs: T0 + i * 120_000, value: 100 * (i + 1) + 0.5,
    }));
    for (let i = 0; i < events.length; i += 9) {
      const batch = [{ project: 'prune', events: events.slice(i, i + 9), tokenPoints: points.slice(i / 9, i / 9 + 1) }];
      await sqlite.write(batch);
      await a.write(batch);
    }
    expect(await pgTables(a, 'prune')).toEqual(sqliteTables(sqlite, 'prune'));
    expect((await pgTables(a, 'prune')).reportedTokens.length).toBeGreaterThan(0);
    expect((await pgTables(a, 'prune')).gapRollups.length).toBeGreaterThan(0);

    const cut = { turnsBefore: T0 + 119_000, rollupsBefore: T0 + 60_000 };
    const expected = await sqlite.prune(cut);
    const [x, y] = await Promise.all([a.prune(cut), b.prune(cut)]);
    expect(expected.turns).toBeGreaterThan(0);
    expect(x.turns + y.turns).toBe(expected.turns);
    expect(await pgTables(b, 'prune')).toEqual(sqliteTables(sqlite, 'prune'));

    // Stored under older rules: evaluated again (from the first turn retention left), to SQLite's tables.
    await a.sql`UPDATE meta SET value = '1' WHERE key = 'rules'`;
    sqlite.sqlite.prepare(`UPDATE meta SET value = '1' WHERE key = 'rules'`).run();
    expect(await b.needsReevaluation()).toBe(true);
    const before = await pgTables(a, 'prune');
    const [result, reference] = [await b.reevaluate(), await sqlite.reevaluate()];
    expect(result.breaksChanged).toBeGreaterThan(0);
    expect(result.breaksChanged).toBe(reference.breaksChanged);
    expect(await a.needsReevaluation()).toBe(false);
    const after = await pgTables(a, 'prune');
    expect(after).not.toEqual(before);
    expect(after).toEqual(sqliteTables(sqlite, 'prune'));

    // Gap rollups go by whole hours: an hour past the turns' hour, every one of them.
    const hourLater = { rollupsBefore: T0 + 3_600_000 };
    await Promise.all([a.prune(hourLater), sqlite.prune(hourLater)]);
    expect((await pgTables(a, 'prune')).gapRollups).toEqual([]);
    expect(await pgTables(a, 'prune')).toEqual(sqliteTables(sqlite, 'prune'));
    await sqlite.close();
    for (const store of opened.splice(opened.indexOf(a), 2)) await store.close();
    await own.drop();
  });

  it('builds the gaps of turns stored before gap rollups existed when the database is evaluated again', async () => {
    const own = await freshDatabase('pggaps');
    const pg = await open(own.url);
    const sqlite = freshStore();
    const batch = [{ project: 'gaps', events: eventsOf(fc.sample(requestArb, { numRuns: 30, seed: 7 })) }];
    await Promise.all([pg.write(batch), sqlite.write(batch)]);
    expect(await pg.needsReevaluation()).toBe(false);
    // As a database written before migrations/pg/0003: no gaps, and no mark that they are kept.
    await pg.sql`DELETE FROM gap_rollups`;
    await pg.sql`UPDATE turns SET gap_bucket = NULL, gap_stake = NULL, gap_rewritten = NULL`;
    await pg.sql`DELETE FROM meta WHERE key = 'gaps'`;
    expect(await pg.needsReevaluation()).toBe(true);
    expect(await pg.gapRows('gaps', {}, {})).toEqual([]);
    await pg.reevaluate();
    expect(await pg.needsReevaluation()).toBe(false);
    expect((await pgTables(pg, 'gaps')).gapRollups.length).toBeGreaterThan(0);
    expect(await pgTables(pg, 'gaps')).toEqual(sqliteTables(sqlite, 'gaps'));
    expect(await pg.gapRows('gaps', {}, {})).toEqual(await sqlite.gapRows('gaps', {}, {}));
    await sqlite.close();
    await opened.splice(opened.indexOf(pg), 1)[0]!.close();
    await own.drop();
  });

  it('shares keys and tail checkpoints between stores on one database', async () => {
    const [a, b] = [await open(), await open()];
    expect(await b.keyState()).toBe('none');
    const key = await a.createKey({ project: 'keys', hash: 'h'.repeat(64), prefix: 'cb_abcdef', scopes: ['ingest', 'read'], name: 'ci', createdMs: 1_000 });
    expect(await b.keyState()).toBe('active');
    expect(await b.hasActiveKeys()).toBe(true);
    expect(await b.keysByPrefix('cb_abcdef')).toEqual([{ ...key, hash: 'h'.repeat(64) }]);
    expect(await b.listKeys()).toEqual([key]);
    const revoked = await b.revokeKey('cb_abcdef', 2_000);
    expect(revoked).toEqual({ ...key, revokedMs: 2_000 });
    // Revoked once: revoking again on the other store keeps the first time.
    expect(await a.revokeKey(String(key.id), 3_000)).toEqual({ ...key, revokedMs: 2_000 });
    expect(await a.keyState()).toBe('revoked');
    expect(await a.revokeKey('cb_nothing', 3_000)).toBeUndefined();

    const checkpoint = { fileId: '1:2', path: '/tmp/a.jsonl', offset: 100, resumeAt: 80, resumeLine: 4, headLength: 64, headHash: 'abc' };
    const external = {
      harness: 'claude-code', sessionId: 's', agentId: 'main', source: 'repl_main_thread', ts: 5_000, reason: 'tools changed',
      callNumber: 3, previousCacheReadTokens: 10, currentCacheReadTokens: 0, cacheCreationTokens: 5, diffPath: null, file: '/tmp/a.jsonl', line: 3,
    };
    const first = await a.write([{ project: 'tail', events: [], checkpoint, externalBreaks: [external, external] }]);
    expect(first.counts[0]!.externalBreaks).toBe(1);
    expect(first.externalBreaks).toEqual([{ project: 'tail', record: external }]);
    expect(await b.tailCheckpoints('tail')).toEqual([checkpoint]);
    const again = await b.write([{ project: 'tail', events: [], checkpoint: { ...checkpoint, offset: 200 }, externalBreaks: [external] }]);
    expect(again.counts[0]!.externalBreaks).toBe(0);
    expect(await a.tailCheckpoints('tail')).toEqual([{ ...checkpoint, offset: 200 }]);
    await a.forgetTailCheckpoints('tail', ['1:2']);
    expect(await b.tailCheckpoints('tail')).toEqual([]);
  });

  it('says what to do when the database is missing or --db is not a URL', async () => {
    const missing = new URL(db.url);
    missing.pathname = '/cb_no_such_database';
    missing.password = 'hunter2';
    const error = await PgStore.open(missing.toString(), SERVICE_DETECTION, { pool: 1 }).catch((e: Error) => e);
    expect(error).toBeInstanceOf(DatabaseUnusable);
    expect((error as Error).message).toMatch(/^the database of postgres:\/\/[^ ]*:\*\*\*@[^ ]*\/cb_no_such_database does not exist .*: create it/);
    expect((error as Error).message).not.toMatch(/hunter2/);
    await expect(PgStore.open('postgres://[bad', SERVICE_DETECTION)).rejects.toThrow(/is not a URL: write postgres:\/\/user:password@host:5432\/database/);
  });

  it('migrates an empty database once when three stores open it at once', async () => {
    const empty = await freshDatabase('pgrace');
    try {
      const stores = await Promise.all([0, 1, 2].map(() => PgStore.open(empty.url, SERVICE_DETECTION, { pool: 1 })));
      try {
        const [migrations] = await stores[0]!.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM drizzle.__drizzle_migrations`;
        // Each migration the package ships, applied once.
        const journal = JSON.parse(readFileSync(join(PG_MIGRATIONS_FOLDER, 'meta', '_journal.json'), 'utf8')) as { entries: unknown[] };
        expect(migrations!.n).toBe(journal.entries.length);
        expect(await stores[1]!.needsReevaluation()).toBe(false);
        await stores[2]!.write([{ project: 'p', events: eventsOf(fc.sample(requestArb, { numRuns: 3, seed: 7 })) }]);
        const [turns] = await stores[0]!.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM turns`;
        expect(turns!.n).toBeGreaterThan(0);
      } finally {
        await Promise.all(stores.map((s) => s.close()));
      }
    } finally {
      await empty.drop();
    }
  });
});
