// SPEC §4.8: the same event twice is stored once and counted as a duplicate;
// nothing read back through the API is doubled.
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { everything, sessionsOf, statsOf, turnsOf } from './api.js';
import { realisticBatch, REALISTIC_TURNS, REORDERED_TOOLS, splitTurn } from './events.js';
import { postEvents, request, startServer } from './server.js';

const SESSIONS = Object.keys(REALISTIC_TURNS);

describe('duplicate delivery against a real server', () => {
  it('the same batch twice: the second answer is all duplicates and nothing is doubled', async () => {
    const server = await startServer();
    const batch = realisticBatch();
    const first = await postEvents(server.url, batch);
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ accepted: batch.length, duplicates: 0, rejected: [] });
    const before = await everything(server.url, SESSIONS);
    expect(before.sessions.map((s) => [s.sessionId, s.turns, s.breaks])).toEqual([
      ['sess_B', 3, 1],
      ['sess_A', 4, 1],
    ]);

    const second = await postEvents(server.url, batch);
    expect(second.status).toBe(200);
    expect(second.body).toEqual({ accepted: 0, duplicates: batch.length, rejected: [] });
    expect(await everything(server.url, SESSIONS)).toEqual(before);

    // A retry is a duplicate whatever its framing: NDJSON, gzipped, this time.
    const ndjson = gzipSync(batch.map((e) => JSON.stringify(e)).join('\n'));
    const third = await request(server.url, '/v1/events', {
      method: 'POST',
      headers: { 'content-type': 'application/x-ndjson', 'content-encoding': 'gzip' },
      body: ndjson,
    });
    expect(third.status).toBe(200);
    expect(third.body).toEqual({ accepted: 0, duplicates: batch.length, rejected: [] });
    expect(await everything(server.url, SESSIONS)).toEqual(before);
  });

  it('an event repeated inside one batch is accepted once', async () => {
    const server = await startServer();
    expect((await postEvents(server.url, realisticBatch())).status).toBe(200);
    const statsBefore = (await statsOf(server.url, 'interval=1d')) as { buckets: { turns: number }[] };
    expect(statsBefore.buckets.map((b) => b.turns)).toEqual([7]);

    const { snapshot, usage } = splitTurn('sess_A', { requestId: 'req_05', at: 30, tools: REORDERED_TOOLS, read: 49_500, write: 400 });
    // An exporter retry that re-sends an old event, plus the new pair twice.
    const reply = await postEvents(server.url, { events: [snapshot, usage, snapshot, realisticBatch()[0], usage] });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ accepted: 2, duplicates: 3, rejected: [] });

    const turns = await turnsOf(server.url, 'sess_A');
    expect(turns.map((t) => [t.requestId, t.state])).toEqual([
      ['req_01', 'cold'],
      ['req_02', 'hit'],
      ['req_03', 'miss'],
      ['req_04', 'hit'],
      ['req_05', 'hit'],
    ]);
    expect(turns[4]!.usage).toEqual({ uncached: 120, read: 49_500, write: 400, write1h: 0, output: 310, cacheReported: true });
    const sessionA = (await sessionsOf(server.url)).find((s) => s.sessionId === 'sess_A');
    expect(sessionA).toMatchObject({ turns: 5, breaks: 1 });
    const stats = (await statsOf(server.url, 'interval=1d')) as { buckets: { turns: number; tokens: { read: number } }[] };
    expect(stats.buckets.map((b) => [b.turns, b.tokens.read])).toEqual([[8, 48_000 + 48_900 + 29_952 + 49_500]]);
  });
});
