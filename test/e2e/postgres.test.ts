// Two `cachebreak serve` processes on one PostgreSQL database: each receives
// part of a session's events, shuffled, at once, and both answer what one
// server given them in order answers; a wrong URL stops a server with one line.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabase, type TestDatabase } from '../pg.js';
import { everything } from './api.js';
import { prng, seedBreak, seedSession, shuffle } from './events.js';
import { postEvents, startServer } from './server.js';

let db: TestDatabase;

beforeAll(async () => {
  db = await freshDatabase('e2eserve');
});

afterAll(async () => {
  await db.drop();
});

describe('serve --db postgres://', () => {
  it('shares one database between servers: events split across them store what in-order delivery stores', async () => {
    const pool = ['--pg-pool', '3'];
    const [reference, a, b] = await Promise.all([startServer(), startServer({ db: db.url, args: pool }), startServer({ db: db.url, args: pool })]);
    // The listening line names the database without secrets; no lock file, no reader threads: many servers is the point.
    expect(a.db).toBe(db.url);

    const events = seedSession('sess_pg');
    for (const event of events) expect((await postEvents(reference.url, [event])).status).toBe(200);
    const random = prng(42);
    const dealt = shuffle(events, random);
    await Promise.all(
      [a, b].map(async (server, i) => {
        for (const event of dealt.filter((_, j) => j % 2 === i)) {
          const reply = await postEvents(server.url, [event]);
          expect(reply.status).toBe(200);
          expect((reply.body as { rejected: unknown[] }).rejected).toEqual([]);
        }
      }),
    );

    const expected = await everything(reference.url, ['sess_pg']);
    expect(expected.breaks).toMatchObject([seedBreak('sess_pg')]);
    for (const server of [a, b]) {
      const got = await everything(server.url, ['sess_pg']);
      for (const key of ['turns', 'breaks', 'sessions', 'stats', 'statsByReason'] as const) expect(got[key], key).toEqual(expected[key]);
    }
    expect((await a.stop()).code).toBe(0);
    expect((await b.stop()).code).toBe(0);
  });

  it('says in one line why it cannot use an unreachable server, without the password', async () => {
    const url = 'postgres://cachebreak:s3cret@127.0.0.1:1/nothing';
    const failed = startServer({ db: url });
    await expect(failed).rejects.toThrow(/cannot reach the PostgreSQL server of postgres:\/\/cachebreak:\*\*\*@127\.0\.0\.1:1\/nothing .*start it, or fix the host and port in --db/);
    await expect(failed).rejects.not.toThrow(/s3cret/);
  });
});
