// Idle connections cannot lock the server out: past --max-connections new
// connections are closed as they arrive, and connections that send no
// request are closed after --headers-timeout, after which a new client is
// answered again.
import type { Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { request, startServer } from '../e2e/server.js';
import { closed, idleSocket } from './wire.js';

const CAP = 50;
const IDLE = CAP + 20;

/** Whether GET /healthz on a new connection answers 200. */
async function healthy(url: string): Promise<boolean> {
  try {
    return (await request(url, '/healthz', { headers: { connection: 'close' }, signal: AbortSignal.timeout(1_000) })).status === 200;
  } catch {
    return false;
  }
}

describe('idle connections', () => {
  it(`${IDLE} idle connections against --max-connections ${CAP}: the excess is closed at once, the rest after --headers-timeout, and /healthz answers again`, async () => {
    const server = await startServer({ args: ['--max-connections', String(CAP), '--headers-timeout', '2s'] });
    const port = Number(new URL(server.url).port);
    const sockets: Socket[] = [];
    try {
      for (let i = 0; i < IDLE; i++) sockets.push(await idleSocket(port));
      const opened = Date.now();
      // The connections over the cap are closed as they arrive.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(sockets.filter((socket) => socket.closed).length).toBeGreaterThanOrEqual(IDLE - CAP);
      expect(await healthy(server.url)).toBe(false);

      // The idle ones are closed after --headers-timeout; then a new client is answered.
      await Promise.all(sockets.map(closed));
      expect(Date.now() - opened).toBeLessThan(5_000);
      let answered = false;
      for (let attempt = 0; attempt < 20 && !answered; attempt++) {
        answered = await healthy(server.url);
        if (!answered) await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(answered).toBe(true);
    } finally {
      for (const socket of sockets) socket.destroy();
    }
  });
});
