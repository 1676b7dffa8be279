// What the proxy holds is bounded by the in-flight budget it shares with the
// main port: the copies of request bodies kept for observation count in it,
// and past it a call is forwarded whole and not observed, never refused or
// buffered; so does the text of an answer held while it is read for usage.
// An answer that inflates past --body-limit or the budget is forwarded as it
// came, not observed, and lets go of its request body at once.
import { request } from 'node:http';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { startServer } from '../e2e/server.js';
import { peakRssMiB } from '../reliability/memory.js';
import { MESSAGE, sinkUpstream, type SinkUpstream } from './sink.js';
import { waitFor } from './wait.js';

const MIB = 1024 * 1024;

/** An Anthropic Messages request of about `bytes`. */
function messages(bytes: number): Buffer {
  return Buffer.from(JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 5, messages: [{ role: 'user', content: 'x'.repeat(bytes) }] }));
}

/** POSTs `body` on a connection of its own; the status and the answer's bytes. */
function post(proxy: string, body: Buffer): Promise<{ status: number; answer: Buffer }> {
  const { hostname, port } = new URL(proxy);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: hostname, port, path: '/anthropic/v1/messages', method: 'POST', headers: { 'content-type': 'application/json', 'content-length': String(body.length) }, agent: false, timeout: 60_000 },
      (res) => {
        const parts: Buffer[] = [];
        res.on('data', (part: Buffer) => parts.push(part));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, answer: Buffer.concat(parts) }));
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end(body);
  });
}

async function observations(url: string): Promise<Record<string, number>> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const counts: Record<string, number> = {};
  for (const line of text.split('\n')) {
    const match = /^cachebreak_proxy_observations_total\{.*outcome="(\w+)".*\} (\d+)$/.exec(line);
    if (match) counts[match[1]!] = (counts[match[1]!] ?? 0) + Number(match[2]);
  }
  return counts;
}

describe('proxy memory', () => {
  it('60 calls with 15 MiB bodies at once: the copies stay within --inflight-limit, every call is forwarded, the rest counted over_budget', async () => {
    const CALLS = 60;
    let upstream: SinkUpstream | undefined;
    try {
      // The upstream answers once every body has arrived, so that all 60 calls are in flight together.
      const waiting: (() => void)[] = [];
      upstream = await sinkUpstream((res) => {
        waiting.push(() => res.writeHead(200, { 'content-type': 'application/json' }).end(MESSAGE));
        if (waiting.length === CALLS) for (const answer of waiting.splice(0)) answer();
      });
      const server = await startServer({ command: 'proxy', args: ['--anthropic-upstream', upstream.url] });
      const before = peakRssMiB(server.pid);
      const body = messages(15 * MIB);
      const replies = await Promise.all(Array.from({ length: CALLS }, () => post(server.proxyUrl!, body)));
      expect(replies.map((reply) => reply.status)).toEqual(Array(CALLS).fill(200));
      expect(upstream.whole).toBe(CALLS);
      const counts = await waitFor('every call counted', () => observations(server.url), (c) => (c.turn ?? 0) + (c.over_budget ?? 0) === CALLS);
      // The default budget (4 × --body-limit = 64 MiB, half of it per client) holds two 15 MiB copies of one client at once.
      expect(counts.turn).toBeGreaterThanOrEqual(2);
      expect(counts.over_budget).toBeGreaterThanOrEqual(CALLS - 4);
      // Before: every copy was held, and the peak grew by 1,250 MiB; now by about 260 (64 MiB of copies, and the
      // garbage of 900 MiB passing through before it is collected).
      expect(peakRssMiB(server.pid) - before).toBeLessThan(450);
    } finally {
      await upstream?.close();
    }
  }, 90_000);

  it('the answers read for usage count in the budget too: three 800 KiB answers at once past a 2 MiB budget, one is not observed', async () => {
    const KIB = 1024;
    const answer = Buffer.from(`{"type":"message","usage":{"input_tokens":1,"output_tokens":1},"pad":"${'a'.repeat(800 * KIB)}"}`);
    let upstream: SinkUpstream | undefined;
    try {
      // Every answer's first 700 KiB once all three calls are in, the rest 300 ms later: 2,100 KiB held at once.
      const waiting: ((part: Buffer | undefined) => void)[] = [];
      upstream = await sinkUpstream((res) => {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(answer.length) });
        waiting.push((part) => (part ? res.write(part) : res.end(answer.subarray(700 * KIB))));
        if (waiting.length < 3) return;
        for (const send of waiting) send(answer.subarray(0, 700 * KIB));
        setTimeout(() => {
          for (const send of waiting) send(undefined);
        }, 300);
      });
      const server = await startServer({ command: 'proxy', args: ['--body-limit', '1MiB', '--inflight-limit', '2MiB', '--anthropic-upstream', upstream.url] });
      const replies = await Promise.all(Array.from({ length: 3 }, () => post(server.proxyUrl!, messages(100))));
      for (const reply of replies) expect(reply.answer.equals(answer)).toBe(true);
      // Before: all three were read whole, each held to the end of its answer.
      const counts = await waitFor('every call counted', () => observations(server.url), (c) => (c.turn ?? 0) + (c.over_budget ?? 0) === 3);
      expect(counts).toEqual({ turn: 2, over_budget: 1 });
      expect(server.stderrLines.some((line) => line.includes('event=proxy_over_budget') && line.includes('response:'))).toBe(true);
    } finally {
      await upstream?.close();
    }
  });

  it('80 calls answered with a gzip bomb: each answer forwarded as sent, not observed, its request body let go; SIGTERM exits at once', async () => {
    const CALLS = 80;
    const AT_ONCE = 4;
    // 64 MiB of JSON string in 64 KiB of gzip: past --body-limit (16 MiB) once inflated.
    const bomb = gzipSync(Buffer.concat([Buffer.from('{"type":"message","usage":{"input_tokens":1},"pad":"'), Buffer.alloc(64 * MIB, 'a'), Buffer.from('"}')]));
    let upstream: SinkUpstream | undefined;
    try {
      let bombing = true;
      upstream = await sinkUpstream((res) => {
        if (bombing) res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' }).end(bomb);
        else res.writeHead(200, { 'content-type': 'application/json' }).end(MESSAGE);
      });
      const server = await startServer({ command: 'proxy', args: ['--anthropic-upstream', upstream.url] });
      const body = messages(12 * MIB);
      for (let sent = 0; sent < CALLS; sent += AT_ONCE) {
        const replies = await Promise.all(Array.from({ length: AT_ONCE }, () => post(server.proxyUrl!, body)));
        for (const reply of replies) {
          expect(reply.status).toBe(200);
          expect(reply.answer.equals(bomb)).toBe(true);
        }
      }
      // Before: an observation waited forever on the destroyed inflater, holding its request body (80 calls: 1 GB).
      // Each is unreadable (past --body-limit inflated) or over_budget (its copy, or the inflated text, past the client's share).
      const counts = await waitFor('every call counted', () => observations(server.url), (c) => (c.unreadable ?? 0) + (c.over_budget ?? 0) === CALLS);
      expect(counts.turn ?? 0).toBe(0);
      // Every copy was let go: two more calls at once fit the client's share, and are observed.
      bombing = false;
      await Promise.all([post(server.proxyUrl!, body), post(server.proxyUrl!, body)]);
      await waitFor('the next two calls stored', () => observations(server.url), (c) => c.turn === 2);
      const stopping = Date.now();
      expect((await server.stop('SIGTERM')).code).toBe(0);
      // Before: no exit (the observations never ended); now 0.1 to 4 s on a busy machine.
      expect(Date.now() - stopping).toBeLessThan(6_000);
    } finally {
      await upstream?.close();
    }
  }, 120_000);
});
