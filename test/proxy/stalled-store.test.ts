// A database that stops answering never fails, delays or drops a proxied
// call: SQLite locked by another process (BEGIN EXCLUSIVE), PostgreSQL's
// connections terminated and its tables locked. Every call is forwarded and
// answered as fast as before; what could not be stored is counted; once the
// database is back, calls are stored again. With API keys (decided from the
// keys in memory) and with open access.
import { describe, expect, it } from 'vitest';
import { generateKey, hashKey, keyPrefix } from '../../src/auth/keys.js';
import { stall } from '../stall.js';
import { freshDb, openStore } from '../store-under-test.js';
import { OBSERVATIONS_HELD } from '../../src/ingest/proxy/observations.js';
import { send } from './client.js';
import { startProxyHarness, type ProxyHarness } from './harness.js';
import { waitFor } from './wait.js';

const usage = { input_tokens: 10, cache_creation_input_tokens: 100, cache_read_input_tokens: 0 };
const body = JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 50, stream: true, messages: [{ role: 'user', content: 'hi' }] });
/** More calls than the proxy holds observations of (queued and taken by its workers), so that some find the queue full. */
const CALLS = OBSERVATIONS_HELD + 64;
const AT_ONCE = 8;
/** A call through the proxy to a local upstream takes milliseconds; the store used to hold each for 5 to 10 s. */
const SLOWEST_MS = 1_000;

/** `count` calls, `AT_ONCE` at a time: each must be answered 200 with exactly what the upstream sent. Returns the slowest, in ms. */
async function calls(h: ProxyHarness, headers: Record<string, string>, count: number): Promise<number> {
  let next = 0;
  let slowest = 0;
  const caller = async () => {
    while (next < count) {
      next++;
      const started = performance.now();
      // A session each: each call's write creates rows, as a busy harness's do.
      const answer = await send(h.proxy, 'POST', '/anthropic/v1/messages', { ...headers, 'x-cachebreak-session': `${headers['x-cachebreak-session']}-${next}` }, body);
      slowest = Math.max(slowest, performance.now() - started);
      expect(answer.status).toBe(200);
      expect(h.anthropic.sent.some((sent) => sent.equals(answer.body))).toBe(true);
    }
  };
  await Promise.all(Array.from({ length: AT_ONCE }, caller));
  return slowest;
}

/** A counter of /metrics, read with `key` when the server has keys. */
async function metric(h: ProxyHarness, key: string | undefined, name: string, labels: Record<string, string>): Promise<number> {
  const response = await fetch(`${h.server.url}/metrics`, key === undefined ? {} : { headers: { authorization: `Bearer ${key}` } });
  expect(response.status).toBe(200);
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  const line = (await response.text()).split('\n').find((l) => l.startsWith(`${name}{`) && wanted.every((w) => l.includes(w)));
  return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(' ') + 1));
}

async function stalledStore(keyed: boolean): Promise<void> {
  const db = await freshDb('stalled');
  const headers: Record<string, string> = { 'x-cachebreak-session': 'stalled' };
  let project = 'default';
  let key: string | undefined;
  if (keyed) {
    key = generateKey();
    await (await openStore(db)).createKey({ project: 'team', hash: hashKey(key), prefix: keyPrefix(key), scopes: ['ingest', 'read'], name: null, createdMs: Date.now() });
    headers['x-cachebreak-key'] = key;
    project = 'team';
  }
  const observed = (outcome: string) => metric(h, key, 'cachebreak_proxy_observations_total', { outcome });
  // Hundreds of calls a second with one key: above the default --rate-limit, which is not the subject here.
  const h = await startProxyHarness({ db, rateLimit: 100_000 });
  h.anthropic.usage = usage;

  // With keys, calls were stored before the stall; open, it starts on a database that has stored nothing
  // (SQLite's first write then creates the project's row, outside the writer's transaction).
  const first = keyed ? 40 : 0;
  const before = keyed ? await calls(h, headers, first) : 0;
  await waitFor('the calls stored', () => observed('turn'), (n) => n === first);

  const release = await stall(db);
  let during: number;
  try {
    during = await calls(h, headers, CALLS);
    // Past the lock of the key copy's refresh too: calls keep being decided from the last copy.
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    during = Math.max(during, await calls(h, headers, 8));
  } finally {
    await release();
  }
  expect(during, `slowest call before the stall ${before.toFixed(0)} ms, during it ${during.toFixed(0)} ms`).toBeLessThan(SLOWEST_MS);
  const total = first + CALLS + 8;
  expect(await metric(h, key, 'cachebreak_proxy_requests_total', { provider: 'anthropic', outcome: 'forwarded' })).toBe(total);
  expect(h.anthropic.received).toHaveLength(total);
  // Every call is accounted for: stored, or counted as not stored.
  const counted = async () => (await observed('turn')) + (await observed('queue_full')) + (await observed('store_failed'));
  await waitFor('every call stored or counted', counted, (n) => n === total, 20_000);
  expect(await observed('queue_full')).toBeGreaterThan(0);
  expect(h.log.some((line) => line.includes('event=proxy_observations_dropped'))).toBe(true);

  // The database is back: the next call is stored, under the key's project.
  const turns = await observed('turn');
  const after = await send(h.proxy, 'POST', '/anthropic/v1/messages', { ...headers, 'x-cachebreak-session': 'after' }, body);
  expect(after.status).toBe(200);
  await waitFor('the call after stored', () => observed('turn'), (n) => n === turns + 1);
  expect(await metric(h, key, 'cachebreak_proxy_observations_total', { project, outcome: 'turn' })).toBe(turns + 1);
}

describe('proxy with a stalled database', () => {
  it('with API keys: forwards every call at once, counts what it could not store, stores again once the database is back', () => stalledStore(true), 90_000);
  it('with open access, from the first call: the same', () => stalledStore(false), 90_000);
});
