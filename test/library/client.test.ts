// cachebreak/client against a real HTTP server on 127.0.0.1 that answers as
// the test scripts it: batches of the SPEC §2 contract, gzipped; 429 and 503
// retried after Retry-After; a flush on shutdown; and never an exception
// into the caller, whatever the server or the network does.
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { CachebreakClient, retryAfterMs, type ClientFailure } from '../../src/client/index.js';
import { toCacheEvent } from '../../src/ingest/http/events.js';
import { turn, usage } from '../core/scenario.js';
import { startServer } from '../e2e/server.js';
import { turnsOf } from '../e2e/api.js';

interface Received {
  at: number;
  headers: IncomingHttpHeaders;
  events: Record<string, unknown>[];
}

interface Reply {
  status: number;
  headers?: Record<string, string>;
  body?: unknown;
}

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

/** A server that records each POST and answers with the next scripted reply (then 200 accepting all). */
async function scripted(replies: Reply[] = []) {
  const received: Received[] = [];
  const server = createServer(async (req, res) => {
    const parts: Buffer[] = [];
    for await (const part of req) parts.push(part as Buffer);
    const raw = Buffer.concat(parts);
    const text = (req.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw).toString();
    const events = (JSON.parse(text) as { events: Record<string, unknown>[] }).events;
    received.push({ at: Date.now(), headers: req.headers, events });
    const reply = replies.shift() ?? { status: 200, body: { accepted: events.length, duplicates: 0, rejected: [] } };
    res.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers });
    res.end(JSON.stringify(reply.body ?? { error: { message: 'scripted' } }));
  });
  servers.push(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received };
}

const events = (n: number, prefix = 'r') => Array.from({ length: n }, (_, i) => turn(`${prefix}${i}`, { at: i * 10_000, usage: usage(i === 0 ? 0 : 40_000, 500) }));

describe('CachebreakClient', () => {
  it('sends batches of at most batchSize, gzipped, in the SPEC §2 contract the server reads back to the same events', async () => {
    const { url, received } = await scripted();
    const client = new CachebreakClient({ url, batchSize: 4, apiKey: 'cb_test_key', flushIntervalMs: 60_000 });
    const sent = events(10);
    for (const event of sent) client.send(event);
    await client.shutdown();
    expect(received.map((r) => r.events.length)).toEqual([4, 4, 2]);
    for (const r of received) {
      expect(r.headers['content-encoding']).toBe('gzip');
      expect(r.headers['content-type']).toBe('application/json');
      expect(r.headers.authorization).toBe('Bearer cb_test_key');
    }
    // The server's own reading of what was sent gives back the events.
    const read = received.flatMap((r) => r.events).map((wire) => toCacheEvent(wire));
    expect(read.map((r) => (r.ok ? r.event : r.error))).toEqual(sent);
    expect(client.stats).toMatchObject({ sent: 10, accepted: 10, dropped: 0, failures: 0, queued: 0 });
  });

  it('sends what waited flushIntervalMs without a full batch', async () => {
    const { url, received } = await scripted();
    const client = new CachebreakClient({ url, batchSize: 100, flushIntervalMs: 50, gzip: false });
    client.send(events(1)[0]!);
    for (let i = 0; i < 100 && received.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(received).toHaveLength(1);
    expect(received[0]!.headers['content-encoding']).toBeUndefined();
    await client.shutdown();
  });

  it('retries 429 and 503 after Retry-After, then delivers', async () => {
    const { url, received } = await scripted([
      { status: 429, headers: { 'retry-after': '1' } },
      { status: 503, headers: { 'retry-after': new Date(Date.now() + 1_000).toUTCString() } },
    ]);
    const failures: ClientFailure[] = [];
    const client = new CachebreakClient({ url, backoffMs: 10, onError: (f) => failures.push(f) });
    client.send(events(1)[0]!);
    await client.flush();
    expect(received).toHaveLength(3);
    expect(received[1]!.at - received[0]!.at).toBeGreaterThanOrEqual(950);
    // An HTTP date has a resolution of one second.
    expect(received[2]!.at - received[1]!.at).toBeGreaterThanOrEqual(0);
    expect(client.stats).toMatchObject({ retries: 2, accepted: 1, dropped: 0 });
    expect(failures).toEqual([]);
    await client.shutdown();
  });

  it('backs off exponentially without Retry-After, and gives up after maxRetries, counted and reported', async () => {
    const { url, received } = await scripted(Array.from({ length: 4 }, () => ({ status: 503 })));
    const failures: ClientFailure[] = [];
    const client = new CachebreakClient({ url, backoffMs: 40, maxRetries: 3, onError: (f) => failures.push(f) });
    client.send(events(1)[0]!);
    client.send(events(1, 'x')[0]!);
    await client.shutdown();
    expect(received).toHaveLength(4);
    const gaps = received.slice(1).map((r, i) => r.at - received[i]!.at);
    expect(gaps[0]).toBeGreaterThanOrEqual(35);
    expect(gaps[1]).toBeGreaterThanOrEqual(75);
    expect(gaps[2]).toBeGreaterThanOrEqual(155);
    expect(failures).toEqual([{ kind: 'gave_up', status: 503, events: 2, message: expect.stringMatching(/^the server answered 503: .*; gave up after 4 attempts$/) }]);
    expect(client.stats).toMatchObject({ dropped: 2, retries: 3, sent: 0 });
  });

  it('does not retry a batch the server refuses, and reports events it rejected one by one', async () => {
    const { url, received } = await scripted([
      { status: 400, body: { error: { message: 'not JSON' } } },
      { status: 200, body: { accepted: 1, duplicates: 0, rejected: [{ index: 1, field: 'model', error: 'events[1].model: required' }] } },
    ]);
    const failures: ClientFailure[] = [];
    const client = new CachebreakClient({ url, batchSize: 2, onError: (f) => failures.push(f) });
    for (const event of events(4)) client.send(event);
    await client.shutdown();
    expect(received).toHaveLength(2);
    expect(failures.map((f) => [f.kind, f.status, f.events])).toEqual([
      ['refused', 400, 2],
      ['rejected_events', 200, 1],
    ]);
    expect(failures[1]!.message).toContain('events[1].model: required');
    expect(client.stats).toMatchObject({ dropped: 2, sent: 2, accepted: 1, rejected: 1 });
  });

  it('never throws into the caller: a full queue, no server, a failing handler, a shut-down client', async () => {
    const failures: ClientFailure[] = [];
    // Nothing listens on port 9 of 127.0.0.1 (discard): every attempt fails to connect.
    const client = new CachebreakClient({
      url: 'http://127.0.0.1:9',
      maxQueue: 3,
      maxRetries: 1,
      backoffMs: 1,
      flushIntervalMs: 60_000,
      onError: (f) => {
        failures.push(f);
        throw new Error('the handler fails too');
      },
    });
    expect(() => client.send(null as never)).not.toThrow();
    for (const event of events(5)) expect(() => client.send(event)).not.toThrow();
    await expect(client.flush()).resolves.toBeUndefined();
    await expect(client.shutdown()).resolves.toBeUndefined();
    expect(() => client.send(events(1)[0]!)).not.toThrow();
    expect(failures.map((f) => f.kind)).toEqual(['invalid_event', 'queue_full', 'queue_full', 'gave_up', 'queue_full']);
    expect(client.stats).toMatchObject({ dropped: 7, sent: 0, queued: 0 });
  });

  it('never throws on bad options: reports them once, then drops and counts every event', async () => {
    for (const [options, problem] of [
      [{ url: 'not a url' }, /url "not a url" is not a URL/],
      [{ url: 'ftp://127.0.0.1' }, /url must be http: or https:/],
      [{ url: 'http://127.0.0.1:9', batchSize: 0 }, /batchSize must be a number of at least 1, not 0/],
      [{ url: 'http://127.0.0.1:9', shutdownTimeoutMs: Number.NaN }, /shutdownTimeoutMs must be a number/],
      [{ url: 'http://127.0.0.1:9', gzip: 'yes' }, /gzip must be true or false/],
    ] as const) {
      const failures: ClientFailure[] = [];
      let client: CachebreakClient | undefined;
      expect(() => (client = new CachebreakClient({ ...(options as object), onError: (f: ClientFailure) => failures.push(f) } as never))).not.toThrow();
      for (const event of events(3)) client!.send(event);
      await expect(client!.shutdown()).resolves.toBeUndefined();
      expect(failures.map((f) => f.kind)).toEqual(['invalid_options', 'invalid_options', 'invalid_options', 'invalid_options']);
      expect(failures[0]).toMatchObject({ events: 0, message: expect.stringMatching(problem) });
      expect(client!.stats).toMatchObject({ dropped: 3, queued: 0, requests: 0 });
    }
    expect(() => new CachebreakClient(undefined as never)).not.toThrow();
  });

  it('does not take an answer that is not cachebreak\'s (an HTML page with 200) as delivered', async () => {
    const html = createServer((req, res) => {
      req.resume().on('end', () => res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>Sign in</title>'));
    });
    servers.push(html);
    html.listen(0, '127.0.0.1');
    await once(html, 'listening');
    const failures: ClientFailure[] = [];
    const client = new CachebreakClient({ url: `http://127.0.0.1:${(html.address() as AddressInfo).port}`, onError: (f) => failures.push(f) });
    for (const event of events(2)) client.send(event);
    await client.shutdown();
    expect(failures).toEqual([{ kind: 'refused', status: 200, events: 2, message: expect.stringMatching(/is not cachebreak's: is http:\/\/127\.0\.0\.1:\d+\/v1\/events a cachebreak server\?/) }]);
    expect(client.stats).toMatchObject({ sent: 0, accepted: 0, dropped: 2, requests: 1 });
  });

  it('gives each request timeoutMs, the answer included, then retries', async () => {
    let requests = 0;
    const silent = createServer(() => void requests++);
    servers.push(silent);
    silent.listen(0, '127.0.0.1');
    await once(silent, 'listening');
    const failures: ClientFailure[] = [];
    const client = new CachebreakClient({ url: `http://127.0.0.1:${(silent.address() as AddressInfo).port}`, timeoutMs: 200, maxRetries: 1, backoffMs: 1, onError: (f) => failures.push(f) });
    client.send(events(1)[0]!);
    const started = Date.now();
    await client.flush();
    expect(Date.now() - started).toBeGreaterThanOrEqual(390);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(requests).toBe(2);
    expect(failures).toEqual([{ kind: 'gave_up', events: 1, message: expect.stringMatching(/no answer within 200 ms \(timeoutMs\); gave up after 2 attempts$/) }]);
  });

  it('shutdown() gives up after shutdownTimeoutMs, and drops what is unsent, reported once', async () => {
    const { url, received } = await scripted(Array.from({ length: 20 }, () => ({ status: 503, headers: { 'retry-after': '10' } })));
    const failures: ClientFailure[] = [];
    const client = new CachebreakClient({ url, batchSize: 2, shutdownTimeoutMs: 300, onError: (f) => failures.push(f) });
    for (const event of events(5)) client.send(event);
    const started = Date.now();
    await client.shutdown();
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(received.length).toBeGreaterThanOrEqual(1);
    expect(failures).toEqual([{ kind: 'shutdown_timeout', events: 5, message: expect.stringMatching(/^5 event\(s\) unsent when the shutdown deadline passed \(shutdownTimeoutMs 300\); last attempt: the server answered 503/) }]);
    expect(client.stats).toMatchObject({ dropped: 5, sent: 0, queued: 0 });
  });

  it('reads Retry-After as seconds or an HTTP date', () => {
    expect(retryAfterMs('2')).toBe(2000);
    expect(retryAfterMs('Wed, 02 Dec 2026 10:00:05 GMT', Date.parse('2026-12-02T10:00:00Z'))).toBe(5000);
    expect(retryAfterMs(null)).toBeUndefined();
    expect(retryAfterMs('soon')).toBeUndefined();
  });

  it('delivers to a real server, which finds the break', { timeout: 30_000 }, async () => {
    const server = await startServer();
    const client = new CachebreakClient({ url: server.url, batchSize: 2 });
    const sent = events(3, 'real');
    sent[2]!.tools = [...sent[2]!.tools!].reverse();
    sent[2]!.usage = usage(0, 50_000);
    for (const event of sent) client.send(event);
    await client.shutdown();
    expect(client.stats).toMatchObject({ accepted: 3, failures: 0 });
    const stored = await turnsOf(server.url, 'sess_A');
    expect(stored.map((t) => [t.requestId, t.state, t.break?.reason ?? null])).toEqual([
      ['real0', 'cold', null],
      ['real1', 'hit', null],
      ['real2', 'miss', 'tools_order_changed'],
    ]);
  });
});
