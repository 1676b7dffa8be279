// SIGTERM while a large POST /v1/events is still arriving: the server stops
// accepting connections, still reads that body to its end, answers 200, and
// exits 0 having stored every event it acknowledged (a restart serves them).
import { request as httpRequest } from 'node:http';
import { describe, expect, it } from 'vitest';
import { turnsOf } from './api.js';
import { splitTurn } from './events.js';
import { rawRequest } from './process.js';
import { startServer, type Reply } from './server.js';

const SESSION = 'sess_G';
/** 8,000 events, about 4 MB: well under the default limits, and long enough to be mid-way through. */
const TURNS = 4_000;

const events = Array.from({ length: TURNS }, (_, i) => {
  const { snapshot, usage } = splitTurn(SESSION, { requestId: `g_${String(i).padStart(4, '0')}`, at: i * 10, read: i === 0 ? 0 : 50_000, write: i === 0 ? 50_000 : 400 });
  return [snapshot, usage];
}).flat();

/**
 * A POST whose body the caller sends in two parts. `Expect: 100-continue`
 * makes the server say when it has parsed the headers, so the request is
 * surely in the server's hands (not idle) before the caller goes on.
 */
function startPost(url: string, body: Buffer) {
  const { hostname, port } = new URL(url);
  let continued!: () => void;
  const accepted = new Promise<void>((resolve) => (continued = resolve));
  const req = httpRequest({
    host: hostname,
    port,
    path: '/v1/events',
    method: 'POST',
    agent: false,
    headers: { 'content-type': 'application/json', 'content-length': String(body.length), expect: '100-continue' },
  });
  req.on('continue', continued);
  const answered = new Promise<Reply>((resolve, reject) => {
    req.on('error', reject);
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', reject);
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode ?? 0, headers: new Headers(), text, body: JSON.parse(text) });
      });
    });
  });
  // Awaited by the test; this only keeps a failure before that point from also
  // being reported as an unhandled rejection when the server is killed.
  answered.catch(() => {});
  const write = (part: Buffer) => new Promise<void>((resolve, reject) => req.write(part, (error) => (error ? reject(error) : resolve())));
  return { accepted, write, end: (part: Buffer) => req.end(part), answered };
}

/**
 * Polls, for at most 5 s, until connecting is refused. A connection that
 * reached the kernel's backlog just as the listener closed is reset instead:
 * not served either, so polling goes on.
 */
async function refused(url: string): Promise<string> {
  const deadline = Date.now() + 5_000;
  for (;;) {
    const outcome = await rawRequest(url, '/healthz').then((r) => `answered ${r.status}`, (e: NodeJS.ErrnoException) => e.code ?? e.message);
    if (outcome === 'ECONNREFUSED' || Date.now() > deadline) return outcome;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('SIGTERM with a request in flight', () => {
  it('finishes the request, answers 200, exits 0, and keeps every event', async () => {
    const server = await startServer();
    const body = Buffer.from(JSON.stringify({ events }));
    const half = Math.floor(body.length / 2);
    const post = startPost(server.url, body);
    await post.accepted;
    await post.write(body.subarray(0, half));

    process.kill(server.pid, 'SIGTERM');
    await server.waitForStderr((line) => / event=shutdown signal=SIGTERM$/.test(line));
    // Stopped accepting, with half the body still to come.
    expect(await refused(server.url)).toBe('ECONNREFUSED');
    post.end(body.subarray(half));

    const reply = await post.answered;
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ accepted: events.length, duplicates: 0, rejected: [] });
    expect(await server.exited).toEqual({ code: 0, signal: null });

    const again = await startServer({ db: server.db });
    const turns = await turnsOf(again.url, SESSION);
    expect(turns).toHaveLength(TURNS);
    expect(turns.at(-1)).toMatchObject({ requestId: 'g_3999', state: 'hit', usage: { read: 50_000, write: 400 } });
    expect(turns.filter((t) => t.state === 'hit')).toHaveLength(TURNS - 1);
  });
});
