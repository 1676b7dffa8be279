// Stateless ingest nodes: three `cachebreak serve` processes on one
// PostgreSQL database take a random workload's events, shuffled and spread
// over them in small concurrent batches, and every node then serves exactly
// what one SQLite server given the same events serves: the same break
// records (every page of /v1/breaks) and the same turns, states and breaks of
// every session. Ids, times, states and costs must match as they are; only
// breaks of the same start time may come in another order (resultsOf). The same holds when a node is killed with SIGKILL
// mid-ingest (frozen until a batch is on its way to it) and its unanswered
// batches are sent to the others, and when
// every node's connections are terminated mid-ingest (a database restart or
// failover) while clients retry what was answered 503 or not at all. An API
// key created in the database opens, and its revocation locks, every node.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { keyPrefix } from '../../src/auth/keys.js';
import { cli } from '../cli/run.js';
import { tempDir } from '../helpers.js';
import { postEvents, request, startServer, type ServerProcess } from '../e2e/server.js';
import { terminateMidQuery } from '../pg.js';
import { freshDb } from '../store-under-test.js';
import { deliver, randomEvents, resultsOf, sessionsIn, smallBatches, type Results } from './cluster.js';

const NODES = 3;
const EVENTS = randomEvents(8, 40, 20261202);
const SESSIONS = sessionsIn(EVENTS);
const REQUEST_IDS = [...new Set(EVENTS.map((e) => e.requestId as string))].sort();

/** The same events through one SQLite server, in order, 50 at a time. */
async function sqliteReference(): Promise<Results> {
  const server = await startServer({ db: join(tempDir(), 'reference.db') });
  for (let i = 0; i < EVENTS.length; i += 50) {
    const reply = await postEvents(server.url, EVENTS.slice(i, i + 50));
    expect(reply.status, reply.text).toBe(200);
  }
  const results = await resultsOf(server.url, SESSIONS);
  await server.stop();
  return results;
}

async function cluster(db: string): Promise<ServerProcess[]> {
  return Promise.all(Array.from({ length: NODES }, () => startServer({ db })));
}

/** Every request id the turns of every session hold. */
function storedIds(results: Results): string[] {
  return Object.values(results.turns)
    .flat()
    .map((t) => t.requestId)
    .sort();
}

describe(`${NODES} serve nodes on one PostgreSQL database`, () => {
  it('serve, from any node, what one SQLite server serves for the same events sent to them concurrently', { timeout: 120_000 }, async () => {
    const reference = await sqliteReference();
    // Enough breaks for the comparison to mean something (16 with this seed and the workload's current fields).
    expect(reference.breaks.length).toBeGreaterThan(12);
    expect(storedIds(reference)).toEqual(REQUEST_IDS);

    const nodes = await cluster(await freshDb('nodes'));
    const batches = smallBatches(EVENTS, 6, 1);
    const delivery = await deliver(nodes, batches, { inFlight: 6, seed: 2, isKilled: () => false });
    // Each node took a share; every event was stored once, the re-sent ones counted as duplicates.
    for (let node = 0; node < NODES; node++) expect(delivery.acknowledged.filter((a) => a.node === node).length).toBeGreaterThan(batches.length / 6);
    expect(delivery.acknowledged.reduce((n, a) => n + a.accepted, 0)).toBe(EVENTS.length - 8 * 3);

    for (const node of nodes) expect(await resultsOf(node.url, SESSIONS)).toEqual(reference);
  });

  it('lose no acknowledged event when a node is killed with SIGKILL mid-ingest and its unanswered batches go to the others', { timeout: 120_000 }, async () => {
    const reference = await sqliteReference();
    const nodes = await cluster(await freshDb('killed'));
    const batches = smallBatches(EVENTS, 4, 3);
    const victim = 0;
    // A third of the way in, the victim is frozen (SIGSTOP) until a batch is
    // sent to it, then killed: that batch is certainly in flight when it dies.
    let frozen = false;
    let killed = false;
    let kill: Promise<unknown> = Promise.resolve();
    const delivery = await deliver(nodes, batches, {
      inFlight: 9,
      seed: 4,
      isKilled: (node) => killed && node === victim,
      onAcknowledged(count) {
        if (!frozen && count >= batches.length / 3) {
          frozen = true;
          process.kill(nodes[victim]!.pid, 'SIGSTOP');
        }
      },
      onSend(node) {
        if (frozen && !killed && node === victim) {
          killed = true;
          kill = new Promise((resolve) => setTimeout(resolve, 50)).then(() => nodes[victim]!.kill9());
        }
      },
    });
    expect(await kill).toEqual({ code: null, signal: 'SIGKILL' });
    // The victim answered some batches before it died, and some were in flight to it when it did.
    expect(delivery.acknowledged.some((a) => a.node === victim)).toBe(true);
    expect(delivery.resent).toBeGreaterThan(0);

    const acknowledgedIds = new Set(batches.flatMap((batch) => batch.map((e) => e.requestId as string)));
    for (const node of nodes.slice(1)) {
      const results = await resultsOf(node.url, SESSIONS);
      expect(storedIds(results).filter((id) => acknowledgedIds.has(id))).toEqual([...acknowledgedIds].sort());
      expect(results).toEqual(reference);
    }
  });

  it('ride through every node\'s connections being terminated mid-ingest, twice: no node exits, every acknowledged event is stored, verdicts as SQLite\'s', { timeout: 120_000 }, async () => {
    const reference = await sqliteReference();
    const db = await freshDb('restarted');
    const nodes = await cluster(db);
    const batches = smallBatches(EVENTS, 4, 5);
    const terminations: Promise<{ terminated: number; waiting: number }>[] = [];
    const delivery = await deliver(nodes, batches, {
      inFlight: 9,
      seed: 6,
      isKilled: () => false,
      // As a client of a database that restarts: what is answered 503 (with Retry-After) or not at all is sent again.
      retries: 40,
      onAcknowledged(count) {
        if (count === Math.floor(batches.length / 3) || count === Math.floor((2 * batches.length) / 3)) terminations.push(terminateMidQuery(db));
      },
    });
    for (const node of nodes) {
      expect(await Promise.race([node.exited, new Promise((resolve) => setTimeout(() => resolve('running'), 100))])).toBe('running');
      expect(node.stderrLines.filter((line) => line.includes('event=unhandled_error'))).toEqual([]);
    }
    // Every node had connections each time (NODES × --pg-pool 2 at most), and a write was in flight on one that ended.
    const terminated = await Promise.all(terminations);
    expect(terminated).toHaveLength(2);
    for (const { terminated: ended, waiting } of terminated) expect([ended >= NODES, waiting > 0]).toEqual([true, true]);
    expect(delivery.acknowledged.filter(Boolean)).toHaveLength(batches.length);
    for (const node of nodes) {
      const results = await resultsOf(node.url, SESSIONS);
      expect(storedIds(results)).toEqual(REQUEST_IDS);
      expect(results).toEqual(reference);
    }
  });

  it('share API keys: one created in the database locks and opens every node, and its revocation locks them all', { timeout: 60_000 }, async () => {
    const db = await freshDb('keys');
    const nodes = await cluster(db);
    const created = await cli(['keys', 'create', '--db', db, '--project', 'default', '--scope', 'ingest,read']);
    expect(created.code, created.stderr).toBe(0);
    const key = created.stdout.trim();
    const bearer = { authorization: `Bearer ${key}` };
    // A node asks whether keys exist at most once a second.
    const statusEverywhere = async (headers: Record<string, string>) =>
      Promise.all(nodes.map(async (node) => (await request(node.url, '/v1/sessions', { headers })).status));
    await expect.poll(() => statusEverywhere({}), { timeout: 5_000, interval: 200 }).toEqual([401, 401, 401]);
    expect(await statusEverywhere(bearer)).toEqual([200, 200, 200]);

    // Written through one node with the key, read through another.
    expect((await postEvents(nodes[0]!.url, EVENTS.slice(0, 10), bearer)).status).toBe(200);
    const sessions = await request(nodes[2]!.url, '/v1/sessions', { headers: bearer });
    expect((sessions.body as { sessions: unknown[] }).sessions.length).toBeGreaterThan(0);

    const revoked = await cli(['keys', 'revoke', '--db', db, keyPrefix(key)]);
    expect(revoked.code, revoked.stderr).toBe(0);
    await expect.poll(() => statusEverywhere(bearer), { timeout: 5_000, interval: 200 }).toEqual([401, 401, 401]);
    expect(await statusEverywhere({})).toEqual([401, 401, 401]);
  });
});
