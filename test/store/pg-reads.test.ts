// The PostgreSQL store's reads answer exactly as the SQLite store's do: for
// random workloads (late, repeated and moved events) and crafted ones
// (harness reports, reported tokens, usage waiting for its snapshot, several
// projects), every read with every filter, order, range and page, the
// insights' reads too.
//
// Over the same rows: what SQLite stored is copied row for row into
// PostgreSQL, so both hold the same rows under the same ids (the sums
// PostgreSQL keeps itself, session sums and break rollups, its triggers
// compute from the copied rows). And end to end: the same workload written
// through each store's own write path.
import fc from 'fast-check';
import type { Sql, SqlPool } from '../../src/store/pg/client.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type Database from 'better-sqlite3';
import { openPg } from '../../src/store/pg/db.js';
import { PgNames } from '../../src/store/pg/names.js';
import { PgReads } from '../../src/store/pg/reads.js';
import { SERVICE_DETECTION } from '../../src/prices/index.js';
import { PgStore } from '../../src/store/pg/store.js';
import type { ExternalBreak, IngestBatch, Page, Store, TokenPoint } from '../../src/store/store.js';
import { SEED_TOOLS, T0, tools, turn, usage } from '../core/scenario.js';
import { freshStore } from '../helpers.js';
import { freshDatabase, type TestDatabase } from '../pg.js';
import { eventsOf, requestArb, type Request } from './random-workload.js';
import { everyRead, type Reader } from './read-comparison.js';

/** Kept by PostgreSQL's own triggers from the copied streams and breaks. */
const DERIVED = new Set(['sessions', 'break_cause_rollups', 'break_tool_rollups']);

let database: TestDatabase;
let sql: SqlPool;

beforeAll(async () => {
  database = await freshDatabase('pgreads');
  // Migrated, and reading bigints as numbers, as the store's own pool.
  sql = (await openPg(database.url, { pool: 2 })).sql;
});

afterAll(async () => {
  await sql?.end();
  await database?.drop();
});

/** The store's tables, emptied, their ids counting from 1 again (as in a new SQLite file). */
async function truncate(tx: Sql = sql): Promise<void> {
  const tables = await tx<{ tablename: string }[]>`SELECT tablename FROM pg_tables WHERE schemaname = 'public'`;
  await tx.unsafe(`TRUNCATE ${tables.map((t) => `"${t.tablename}"`).join(', ')} RESTART IDENTITY`);
}

/** Replaces what PostgreSQL holds with a copy of the SQLite file's rows. */
async function copy(sqlite: Database.Database): Promise<void> {
  const columns = await sql<{ table_name: string; column_name: string; data_type: string }[]>`
    SELECT table_name, column_name, data_type FROM information_schema.columns
    WHERE table_schema = 'public' AND is_generated = 'NEVER' ORDER BY table_name, ordinal_position`;
  const tables = new Map<string, { name: string; boolean: boolean }[]>();
  for (const c of columns) {
    const list = tables.get(c.table_name) ?? [];
    list.push({ name: c.column_name, boolean: c.data_type === 'boolean' });
    tables.set(c.table_name, list);
  }
  await sql.begin(async (tx) => {
    await truncate(tx);
    for (const [table, cols] of tables) {
      if (DERIVED.has(table)) continue;
      const rows = sqlite.prepare(`SELECT ${cols.map((c) => `"${c.name}"`).join(', ')} FROM "${table}"`).all() as Record<string, unknown>[];
      for (const row of rows) for (const c of cols) if (c.boolean && row[c.name] !== null) row[c.name] = row[c.name] === 1;
      for (let i = 0; i < rows.length; i += 500) {
        const chunk = rows.slice(i, i + 500);
        const places = chunk.map((_, r) => `(${cols.map((_, c) => `$${r * cols.length + c + 1}`).join(', ')})`);
        await tx.unsafe(
          `INSERT INTO "${table}" (${cols.map((c) => `"${c.name}"`).join(', ')}) VALUES ${places.join(', ')}`,
          chunk.flatMap((row) => cols.map((c) => row[c.name])),
        );
      }
    }
  });
}

function report(i: number, sessionId: string, agentId: string, at: number): ExternalBreak {
  return {
    harness: 'claude-code',
    sessionId,
    agentId,
    source: agentId === 'main' ? 'repl_main_thread' : agentId,
    ts: T0 + at,
    reason: `tools changed (+${i}/-0 tools)`,
    callNumber: i % 3 === 0 ? null : i,
    previousCacheReadTokens: i % 2 === 0 ? 48_000 : null,
    currentCacheReadTokens: 0,
    cacheCreationTokens: 48_900,
    diffPath: i % 4 === 0 ? `/tmp/diff-${i}.txt` : null,
    file: `/home/u/.claude/debug/${sessionId}.txt`,
    line: 10 * i,
  };
}

function point(series: string, model: string, kind: string, at: number, value: number, temporality: TokenPoint['temporality'] = 'delta'): TokenPoint {
  return { series, source: 'claude_code', model, kind, temporality, startMs: T0, timeMs: T0 + at, value };
}

/**
 * Sessions alike but for their ids, each breaking once at the same instant:
 * every ranking ties, and ties are ordered by id (byte-wise: Z < a < b < é).
 */
const TIED = ['é-tie', 'b-tie', 'Z-tie', 'a-tie'].flatMap((sessionId) => [
  turn(`${sessionId}-1`, { sessionId, at: 300_000, usage: usage(0, 40_000) }),
  turn(`${sessionId}-2`, { sessionId, at: 360_000, tools: tools([...SEED_TOOLS].reverse()), usage: usage(0, 40_000) }),
]);

/** The random requests, with what no request carries: tied sessions, harness reports, token metrics, waiting usage, another project. */
function workload(requests: Request[]): IngestBatch[] {
  const events = [...eventsOf(requests), ...TIED];
  const waiting = (requestId: string) => ({ type: 'usage' as const, requestId, usage: usage(0, 0, 10) });
  return [
    {
      project: 'default',
      events,
      tokenPoints: [
        point('a', 'claude-sonnet-4-5', 'input', 10_000, 500),
        point('a', 'claude-sonnet-4-5', 'input', 70_000, 250),
        point('b', 'claude-opus-4-5', 'cache_read', 130_000, 4_000, 'cumulative'),
        point('b', 'claude-opus-4-5', 'cache_read', 400_000, 9_000, 'cumulative'),
        point('c', 'unknown-model', 'output', 950_000, 77),
      ],
      // Ties in time, so that pages end between reports of one instant.
      externalBreaks: [0, 1, 2, 3, 4, 5, 6].map((i) => report(i, i % 3 === 0 ? 'sess-2' : 'sess-1', i % 2 === 0 ? 'main' : 'agent:explore', [0, 0, 60_000, 60_000, 60_000, 150_000, 900_000][i]!)),
    },
    { project: 'other', events: [waiting('w1'), ...events.slice(0, 3).map((e) => ({ ...e, requestId: `other-${e.requestId}` }))] },
    { project: 'default', events: [waiting('w2'), waiting('w3')] },
  ];
}

/** Writes the workload in batches of `size` events, so that late events revise and move what earlier ones stored. */
async function write(store: Store, batches: IngestBatch[], size: number): Promise<void> {
  for (const batch of batches) {
    for (let i = 0; i < Math.max(1, batch.events.length); i += size) {
      await store.write([{ ...batch, events: batch.events.slice(i, i + size), ...(i === 0 ? {} : { tokenPoints: [], externalBreaks: [] }) }]);
    }
  }
}

/**
 * Pages without what depends on the ids a store gave its rows: breaks of one
 * instant are ordered by id, and a cursor names the id of its page's last
 * break. Kept: how many pages, the times cursors name, and every item.
 */
function withoutIds(answer: unknown): unknown {
  const isPages = Array.isArray(answer) && answer.length > 0 && answer.every((p) => typeof p === 'object' && p !== null && 'nextCursor' in p);
  if (!isPages) return answer;
  const pages = answer as Page<unknown>[];
  const times = pages.map((p) => (p.nextCursor === null ? null : (JSON.parse(Buffer.from(p.nextCursor, 'base64url').toString()) as unknown[])[0]));
  const items = pages.flatMap((p) => p.items).map((item) => JSON.stringify(item)).sort();
  return { times, items };
}

/** Every read of every project (and of one never stored) answers alike; `normal` removes what may differ. */
async function expectSameReads(expected: Reader, pg: Reader, requests: Request[], normal = (answer: unknown) => answer): Promise<void> {
  const requestIds = [...requests.map((_, i) => `req_${i}`), 'a-tie-2'];
  for (const project of ['default', 'other', 'unknown']) {
    const want = await everyRead(expected, project, requestIds);
    const got = await everyRead(pg, project, requestIds);
    expect(got.map(([label]) => label)).toEqual(want.map(([label]) => label));
    for (const [i, [label, value]] of want.entries()) expect(normal(got[i]![1]), `${project}: ${label}`).toEqual(normal(value));
  }
}

const workloads = () => fc.tuple(fc.array(requestArb, { minLength: 1, maxLength: 25 }), fc.integer({ min: 1, max: 6 }));

describe('PostgreSQL reads', () => {
  it('answer every read as the SQLite store does, over the same stored rows', async () => {
    await fc.assert(
      fc.asyncProperty(workloads(), async ([requests, size]) => {
        const sqlite = freshStore();
        await write(sqlite, workload(requests), size);
        await copy(sqlite.sqlite);
        await expectSameReads(sqlite, new PgReads(sql, new PgNames(sql)), requests);
        await sqlite.close();
      }),
      { numRuns: 3 },
    );
  }, 300_000);

  it('answer every read as the SQLite store does when both stored the same workload', async () => {
    await fc.assert(
      fc.asyncProperty(workloads(), async ([requests, size]) => {
        await truncate();
        const [sqlite, pg] = [freshStore(), await PgStore.open(database.url, SERVICE_DETECTION, { pool: 2 })];
        try {
          await write(sqlite, workload(requests), size);
          await write(pg, workload(requests), size);
          // Each store numbers its rows as its writer inserts them: the order of breaks of one instant may differ.
          await expectSameReads(sqlite, pg, requests, withoutIds);
          // The insights' reads had something to compare: the tied sessions write and never read.
          for (const found of [
            await sqlite.gapRows('default', {}, {}),
            await sqlite.lowRateStreams('default', {}, {}, 1, 1, 100),
            await sqlite.streamSnapshots('default', 'a-tie', 'main', 10),
            await sqlite.coldTurns('default', {}, {}, 100),
          ]) {
            expect(found.length).toBeGreaterThan(0);
          }
        } finally {
          await pg.close();
          await sqlite.close();
        }
      }),
      { numRuns: 4 },
    );
  }, 300_000);
});
