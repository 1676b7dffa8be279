// The PostgreSQL reads behind the dashboards read what answers them, as the
// SQLite ones do (query-plans.test.ts): a ranking of sessions is the first
// rows of its index, even where most sessions tie on the ranked value; one
// session's breaks come through the stream index; stats read the rollups
// through their key; cold turns come through the partial index turns_cold.
// Plans of the statements PgReads sends, on 20,000 sessions.
import { createHash } from 'node:crypto';
import { createPool, type SqlPool } from '../../src/store/pg/client.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPg } from '../../src/store/pg/db.js';
import { PgNames } from '../../src/store/pg/names.js';
import { PgReads } from '../../src/store/pg/reads.js';
import type { SessionOrder } from '../../src/store/store.js';
import { freshDatabase, type TestDatabase } from '../pg.js';

let database: TestDatabase;
let sql: SqlPool;
/** Every statement the reads send, with its parameters. */
const sent: [string, unknown[]][] = [];
let traced: SqlPool;
let reads: PgReads;

beforeAll(async () => {
  database = await freshDatabase('pgplans');
  sql = (await openPg(database.url, { pool: 1 })).sql;
  traced = createPool(database.url, { max: 1, connectTimeout: 5 });
  // Every statement, the store's own and drizzle's, goes through the pool's query.
  const query = traced.pool.query.bind(traced.pool) as (config: string | { text: string }, params?: unknown[]) => Promise<unknown>;
  (traced.pool as { query: unknown }).query = (config: string | { text: string }, params?: unknown[]) => {
    sent.push([typeof config === 'string' ? config : config.text, params ?? []]);
    return query(config, params);
  };
  reads = new PgReads(traced, new PgNames(traced));
  await sql`INSERT INTO projects (name) VALUES ('default'), ('other')`;
  await sql`INSERT INTO labels (kind, value) VALUES ('model', 'm'), ('provider', 'p'), ('agent', 'main')`;
  // A third of the sessions never read the cache and nine in ten cost nothing: long ties on every ranking.
  await sql`
    INSERT INTO streams (project_id, session_id, agent_id, first_ts, last_ts, turns, uncached, read, write, extra_cost_micro_usd)
    SELECT 1 + g % 2, 'sess-' || md5(g::text), 3, 1000 + g, 2000 + g / 3, 3, 100, CASE WHEN g % 3 = 0 THEN 0 ELSE g % 1000 END, 50,
           CASE WHEN g % 10 = 0 THEN g % 5000 ELSE 0 END
    FROM generate_series(1, 40000) g`;
  await sql`
    INSERT INTO breaks (turn_id, project_id, stream_id, ts, model_id, provider_id, agent_id, reason, record)
    SELECT g, 1 + g % 2, 1 + g % 40000, 1000 + g, 1, 2, 3, 'tools_order_changed', '{"changedToolNames":["shell"]}' FROM generate_series(1, 40000) g`;
  await sql`
    INSERT INTO rollups (minute, project_id, model_id, provider_id, agent_id, state, reason, turns)
    SELECT g / 2, 1 + g % 2, 1, 2, 3, 0, '', 1 FROM generate_series(1, 40000) g`;
  // One turn in a thousand is cold: fan-out cold starts read those alone.
  await sql`INSERT INTO prefixes (hash, model) VALUES ('p1', 'm')`;
  await sql`
    INSERT INTO turns (project_id, rid, request_id, stream_id, ts, prefix_id, state, write)
    SELECT 1 + g % 2, g, 'req-' || g, 1 + g % 40000, 1000 + g, 1, CASE WHEN g % 1000 = 0 THEN 1 ELSE 0 END, 10 FROM generate_series(1, 40000) g`;
  await sql`ANALYZE`;
});

afterAll(async () => {
  await traced?.end();
  await sql?.end();
  await database?.drop();
});

/** The plans of the statements `read` sends that read `table` (or match a pattern). */
async function plansOf(table: string | RegExp, read: () => Promise<unknown>): Promise<string[]> {
  sent.length = 0;
  await read();
  const plans: string[] = [];
  const reads = typeof table === 'string' ? new RegExp(`from "${table}"`, 'i') : table;
  for (const [query, params] of sent.filter(([query]) => reads.test(query))) {
    const rows = await sql.unsafe<{ 'QUERY PLAN': string }[]>(`EXPLAIN (COSTS OFF) ${query}`, params as never[]);
    plans.push(rows.map((r) => r['QUERY PLAN'].trim()).join('; '));
  }
  return plans;
}

describe('PostgreSQL query plans', () => {
  it('rank sessions by reading the first rows of an index, not by sorting every session', async () => {
    const indexes: Record<SessionOrder, string> = { recent: 'sessions_last_ts', worst_cache_rate: 'sessions_rate', extra_cost: 'sessions_cost' };
    for (const [order, index] of Object.entries(indexes) as [SessionOrder, string][]) {
      let found = 0;
      const plans = await plansOf('sessions', async () => {
        found = (await reads.sessions('default', { from: 0 }, {}, { limit: 50 }, order)).items.length;
      });
      expect(found, order).toBe(50);
      expect(plans, order).toHaveLength(1);
      expect(plans[0], order).toMatch(new RegExp(`^Limit; -> +Index Scan (Backward )?using ${index} on sessions`));
      expect(plans[0], order).not.toMatch(/Sort/);
    }
  });

  it("find one session's breaks through the stream index", async () => {
    const plans = await plansOf('breaks', () => reads.breaks('default', {}, { sessionId: [`sess-${createHash('md5').update('4').digest('hex')}`] }, { limit: 50 }));
    expect(plans).toHaveLength(1);
    expect(plans[0]).toMatch(/Index Scan using breaks_stream_ts on breaks/);
    expect(plans[0]).not.toMatch(/Seq Scan on breaks/);
  });

  it('find the cold turns of a range through the partial index turns_cold, not every turn', async () => {
    let found = 0;
    const plans = await plansOf(/from turns t/i, async () => {
      found = (await reads.coldTurns('default', { from: 0, to: 100_000 }, {}, 100)).length;
    });
    expect(found).toBe(40);
    expect(plans).toHaveLength(1);
    expect(plans[0]).toMatch(/(Index|Bitmap Index) Scan on turns_cold|Index Scan using turns_cold on turns/);
    expect(plans[0]).not.toMatch(/Seq Scan on turns/);
  });

  it('read stats and totals from the rollups through their key', async () => {
    const range = { from: 100 * 60_000, to: 200 * 60_000 };
    const plans = [
      ...(await plansOf('rollups', () => reads.stats('default', { ...range, intervalMs: 300_000, groupBy: 'model', filters: {} }))),
      ...(await plansOf('rollups', () => reads.totals('default', { ...range, filters: {} }))),
    ];
    expect(plans).toHaveLength(2);
    for (const plan of plans) {
      expect(plan).toMatch(/Index (Only )?Scan using rollups_key on rollups|Bitmap Index Scan on rollups_key/);
      expect(plan).not.toMatch(/Seq Scan/);
    }
  });
});
