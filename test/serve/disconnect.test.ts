// A client that goes away in the middle of its request body is not a server
// failure: no `unhandled_error` (with a stack) per dropped connection, only
// an info line, and a flood of them writes one line, not one per connection.
import { connect } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SERVICE_DETECTION } from '../../src/prices/index.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { tempDir } from '../helpers.js';

const servers: RunningServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});

/** Sends the head and the start of a body that announces far more, then drops the connection. */
function abandon(url: string, path: string): Promise<void> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => {
      socket.write(`POST ${path} HTTP/1.1\r\nHost: ${hostname}:${port}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"events":[`);
      setTimeout(() => socket.destroy(), 50);
    });
    socket.on('close', () => resolve());
    socket.on('error', reject);
  });
}

describe('a client that disconnects mid-request', () => {
  it('is logged once as client_disconnected, never as unhandled_error', async () => {
    const lines: string[] = [];
    const server = await startServer(
      { host: '127.0.0.1', port: 0, db: join(tempDir(), 'd.db'), bodyLimit: 1 << 20, detection: SERVICE_DETECTION, synchronous: 'normal', project: 'default', readWorkers: 0 },
      (line) => lines.push(line),
    );
    servers.push(server);
    for (let i = 0; i < 10; i++) await Promise.all(['/v1/events', '/v1/logs', '/v1/traces'].map((path) => abandon(server.url, path)));
    // The server notices each close on its own time.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(lines.filter((l) => l.includes('unhandled_error'))).toEqual([]);
    expect(lines.filter((l) => l.includes('event=client_disconnected'))).toHaveLength(1);
    expect(lines.join('')).not.toContain('stack=');
    // The server still answers.
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
  });
});
