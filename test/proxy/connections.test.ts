// The proxy's port has the main port's limits: past --max-connections new
// connections are closed as they arrive, a connection that sends no request
// is closed after --headers-timeout, and a request body that stops arriving
// is answered 408 after --body-timeout, the upstream call cut with it.
import type { Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { startServer } from '../e2e/server.js';
import { closed, idleSocket, stalledUpload } from '../reliability/wire.js';
import { send } from './client.js';
import { answerMessage, sinkUpstream, type SinkUpstream } from './sink.js';
import { waitFor } from './wait.js';

const CAP = 50;
const IDLE = CAP + 20;

/** Whether the proxy answers a request on a new connection (404 for a path it does not forward). */
async function answers(proxy: string): Promise<boolean> {
  try {
    const reply = await Promise.race([send(proxy, 'GET', '/elsewhere', { connection: 'close' }), new Promise<never>((_, reject) => setTimeout(() => reject(new Error('no answer')), 1_000))]);
    return reply.status === 404;
  } catch {
    return false;
  }
}

async function metric(url: string, name: string, labels: Record<string, string>): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && wanted.every((w) => l.includes(w)));
  return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(' ') + 1));
}

describe('proxy connections', () => {
  it(`${IDLE} idle connections against --max-connections ${CAP}: the excess is closed at once, the rest after --headers-timeout, and the proxy answers again`, async () => {
    const server = await startServer({ command: 'proxy', args: ['--max-connections', String(CAP), '--headers-timeout', '2s'] });
    const proxy = server.proxyUrl!;
    const port = Number(new URL(proxy).port);
    const sockets: Socket[] = [];
    try {
      for (let i = 0; i < IDLE; i++) sockets.push(await idleSocket(port));
      const opened = Date.now();
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(sockets.filter((socket) => socket.closed).length).toBeGreaterThanOrEqual(IDLE - CAP);
      expect(await answers(proxy)).toBe(false);

      // Before: the connections stayed open (a silent one still was after 75 s).
      await Promise.all(sockets.map(closed));
      expect(Date.now() - opened).toBeLessThan(5_000);
      let answered = false;
      for (let attempt = 0; attempt < 20 && !answered; attempt++) {
        answered = await answers(proxy);
        if (!answered) await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(answered).toBe(true);
    } finally {
      for (const socket of sockets) socket.destroy();
    }
  });

  it('answers a stalled request body 408 after --body-timeout, cuts the upstream call, and serves the next call', async () => {
    let upstream: SinkUpstream | undefined;
    try {
      upstream = await sinkUpstream(answerMessage);
      const server = await startServer({ command: 'proxy', args: ['--body-timeout', '2s', '--anthropic-upstream', upstream.url] });
      const body = Buffer.from(JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 5, messages: [{ role: 'user', content: 'x'.repeat(64 * 1024) }] }));
      const { status, afterMs } = await stalledUpload(server.proxyUrl!, '/anthropic/v1/messages', body, { 'content-type': 'application/json' }).reply;
      // Before: no answer, the connection held open for as long as the client kept it.
      expect(status).toBe(408);
      expect(afterMs).toBeGreaterThanOrEqual(1_500);
      expect(afterMs).toBeLessThan(5_000);
      expect(await metric(server.url, 'cachebreak_proxy_requests_total', { provider: 'anthropic', outcome: 'client_stalled' })).toBe(1);
      // The upstream never had the whole body: its call was cut, not left waiting.
      await waitFor('the upstream call cut', async () => upstream!.cut, (n) => n === 1);
      expect(upstream.whole).toBe(0);
      const next = await send(server.proxyUrl!, 'POST', '/anthropic/v1/messages', { 'content-type': 'application/json' }, body);
      expect(next.status).toBe(200);
    } finally {
      await upstream?.close();
    }
  });

  it('does not count against --body-timeout the time an upstream that reads slowly holds the body back', async () => {
    let upstream: SinkUpstream | undefined;
    try {
      // The upstream reads nothing for 3 s: with a 1 s --body-timeout, an 8 MiB body (more than the sockets buffer) must wait.
      upstream = await sinkUpstream(answerMessage, 3_000);
      const server = await startServer({ command: 'proxy', args: ['--body-timeout', '1s', '--anthropic-upstream', upstream.url] });
      const body = Buffer.from(JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 5, messages: [{ role: 'user', content: 'x'.repeat(8 * 1024 * 1024) }] }));
      const started = Date.now();
      const answer = await send(server.proxyUrl!, 'POST', '/anthropic/v1/messages', { 'content-type': 'application/json' }, body);
      expect(answer.status).toBe(200);
      expect(Date.now() - started).toBeGreaterThanOrEqual(2_500);
      expect(upstream.whole).toBe(1);
      expect(await metric(server.url, 'cachebreak_proxy_requests_total', { provider: 'anthropic', outcome: 'client_stalled' })).toBe(0);
    } finally {
      await upstream?.close();
    }
  });
});
