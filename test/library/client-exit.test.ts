// A harness process using cachebreak/client exits promptly whatever the
// server does: refused connections, or a server that accepts and never
// answers. 5,000 events queued, then the process awaits shutdown(): it is
// gone within shutdownTimeoutMs (default 5 s) and a margin. Or the process
// just ends: the client flushes when the event loop empties, for
// shutdownTimeoutMs, but a request already under way holds the loop until
// its own timeoutMs (default 10 s), so a silent server keeps it at most
// timeoutMs + shutdownTimeoutMs. Either way the events it could not send
// are counted and reported as one `shutdown_timeout`.
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CHILD = fileURLToPath(new URL('./client-exit-child.ts', import.meta.url));
const DEADLINE_MS = 5_000;
/** One request's time limit (timeoutMs), default. */
const REQUEST_MS = 10_000;
/** Beyond the deadline: the process's own exit, on a busy machine. */
const MARGIN_MS = 2_000;

const servers: { server: Server; sockets: Set<Socket> }[] = [];
afterEach(async () => {
  for (const { server, sockets } of servers.splice(0)) {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  }
});

/** A server that accepts connections and never answers. */
async function silentServer(): Promise<string> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  servers.push({ server, sockets });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** A loopback address where nothing listens: a port just freed. */
async function downServer(): Promise<string> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return `http://127.0.0.1:${port}`;
}

interface Exit {
  /** From the events queued to the process gone. */
  afterQueuedMs: number;
  stats: { dropped: number; sent: number; queued: number };
  failures: string[];
}

function harness(url: string, ending: 'exit' | 'shutdown'): Promise<Exit> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['--import', 'tsx', CHILD, url, ending], { cwd: ROOT, timeout: 60_000 }, (error, stdout, stderr) => {
      const exitedAt = Date.now();
      if (error) return reject(new Error(`${error.message}\n${stderr}`));
      const [queued, last] = stdout.trim().split('\n').map((line) => JSON.parse(line));
      resolve({ afterQueuedMs: exitedAt - queued.queuedAt, stats: last.stats, failures: last.failures });
    });
  });
}

describe('CachebreakClient does not hold the process', () => {
  for (const [server, address] of [
    ['down', downServer],
    ['silent', silentServer],
  ] as const) {
    for (const ending of ['exit', 'shutdown'] as const) {
      it(`server ${server}, 5,000 events, ${ending === 'exit' ? 'the process just ends' : 'shutdown() awaited'}: gone within the deadline`, { timeout: 60_000 }, async () => {
        const result = await harness(await address(), ending);
        console.log(`server ${server}, ${ending}: exited ${result.afterQueuedMs} ms after queuing 5,000 events`);
        const heldByRequest = server === 'silent' && ending === 'exit' ? REQUEST_MS : 0;
        expect(result.afterQueuedMs).toBeLessThan(heldByRequest + DEADLINE_MS + MARGIN_MS);
        // Not cut before the deadline either: it tried for shutdownTimeoutMs.
        expect(result.afterQueuedMs).toBeGreaterThanOrEqual(DEADLINE_MS);
        expect(result.stats).toMatchObject({ dropped: 5_000, sent: 0, queued: 0 });
        expect(result.failures).toEqual(['shutdown_timeout']);
      });
    }
  }
});
