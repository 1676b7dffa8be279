// A server with no API key is open, and says so: on its start line, in
// `keys list`, and in a warning. Open, it still refuses what would let
// someone else in: a Host header that DNS could have rebound (a web page
// reading the developer's local cachebreak), and requests that came through
// a reverse proxy (the TLS setup of docs/security.md would serve everyone). Revoking the
// last key keeps a server locked.
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { SERVICE_DETECTION } from '../../src/prices/index.js';
import { startServer, type RunningServer, type ServerOptions } from '../../src/server.js';
import { rawRequest, type Reply } from '../e2e/process.js';
import { startServer as startServerProcess } from '../e2e/server.js';
import { tempDir } from '../helpers.js';

async function cli(argv: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await main(argv, { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t), env: {}, interactive: false });
  return { code, stdout, stderr };
}

const servers: RunningServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});

async function serve(db: string, extra: Partial<ServerOptions> = {}) {
  const lines: string[] = [];
  const server = await startServer(
    { host: '127.0.0.1', port: 0, db, bodyLimit: 1 << 20, detection: SERVICE_DETECTION, synchronous: 'normal', project: 'default', readWorkers: 0, ...extra },
    (line) => lines.push(line),
  );
  servers.push(server);
  return { server, lines };
}

function get(server: RunningServer, path: string, headers: Record<string, string>): Promise<Reply> {
  return rawRequest(server.url, path, { headers });
}

const port = (server: RunningServer) => new URL(server.url).port;
const errorOf = (reply: Reply) => (reply.body as { error: { code: string; message: string; hint: string } }).error;

describe('an open server (no API key)', () => {
  it('answers only Host names DNS cannot rebind, and those configured with --public-url', async () => {
    const { server } = await serve(join(tempDir(), 'h.db'), { publicHosts: ['cachebreak.example.com'] });
    expect(server.access).toBe('open');
    const p = port(server);
    for (const host of [`127.0.0.1:${p}`, `localhost:${p}`, 'localhost', `[::1]:${p}`, `LOCALHOST:${p}`, `10.1.2.3:${p}`, 'cachebreak.example.com', `cachebreak.example.com:${p}`]) {
      expect((await get(server, '/v1/sessions', { host })).status, host).toBe(200);
    }
    // DNS rebinding: the browser sends the attacker's name.
    const rebound = await get(server, '/v1/sessions', { host: `attacker.example.com:${p}` });
    expect(rebound.status).toBe(403);
    expect(errorOf(rebound).message).toBe(
      `this server has no API key, so it answers only requests addressed to localhost, an IP address or a --public-url name; this one is addressed to "attacker.example.com:${p}" (Host header)`,
    );
    expect(errorOf(rebound).hint).toContain('--public-url');
    for (const host of ['localhost.', 'localhost.attacker.example.com', 'sub.cachebreak.example.com', '127.0.0.1.nip.io']) {
      expect((await get(server, '/v1/sessions', { host })).status, host).toBe(403);
    }
    // Writes too; the health checks carry no data and stay open.
    const write = await rawRequest(server.url, '/v1/events', { method: 'POST', headers: { host: 'attacker.example.com', 'content-type': 'application/json' }, body: Buffer.from('{"events":[]}') });
    expect(write.status).toBe(403);
    expect((await get(server, '/healthz', { host: 'attacker.example.com' })).status).toBe(200);
  });

  it('refuses requests that came through a proxy, and says so loudly once', async () => {
    const { server, lines } = await serve(join(tempDir(), 'p.db'));
    const host = `127.0.0.1:${port(server)}`;
    expect(lines.filter((l) => l.includes('event=open_access'))).toHaveLength(1);
    expect(lines.find((l) => l.includes('event=open_access'))).toContain('level=warn');
    for (const [header, value] of [
      ['x-forwarded-for', '203.0.113.7'],
      ['forwarded', 'for=203.0.113.7;proto=https'],
      ['x-real-ip', '203.0.113.7'],
    ] as const) {
      const reply = await get(server, '/v1/sessions', { host, [header]: value });
      expect(reply.status, header).toBe(403);
      expect(errorOf(reply).message).toBe(
        `this server has no API key and answers only local clients, but this request came through a proxy (${header}): anyone who can reach the proxy could read and write`,
      );
      expect(errorOf(reply).hint).toContain('--insecure-no-auth');
    }
    const warned = lines.filter((l) => l.includes('event=open_behind_proxy'));
    expect(warned).toHaveLength(1);
    expect(warned[0]).toContain('level=warn');
    expect(warned[0]).toContain('header=x-forwarded-for');
    expect((await get(server, '/v1/sessions', { host })).status).toBe(200);
  });

  it('with --insecure-no-auth, answers proxied requests (the proxy authenticates) but still warns once', async () => {
    const { server, lines } = await serve(join(tempDir(), 'i.db'), { insecureNoAuth: true });
    for (let i = 0; i < 3; i++) expect((await get(server, '/v1/sessions', { host: `127.0.0.1:${port(server)}`, 'x-forwarded-for': '203.0.113.7' })).status).toBe(200);
    expect(lines.filter((l) => l.includes('event=open_behind_proxy'))).toHaveLength(1);
    expect(lines.find((l) => l.includes('event=open_behind_proxy'))).toContain('the proxy must authenticate every request');
  });
});

describe('a locked server (API keys)', () => {
  it('needs a key whatever the Host or proxy headers, and a key is enough', async () => {
    const db = join(tempDir(), 'l.db');
    const created = await cli(['keys', 'create', '--db', db, '--project', 'alpha', '--scope', 'read']);
    const key = created.stdout.trim();
    const { server, lines } = await serve(db);
    expect(server.access).toBe('locked');
    expect(lines.filter((l) => l.includes('event=open_access'))).toEqual([]);
    const behind = { host: 'cachebreak.example.com', 'x-forwarded-for': '203.0.113.7' };
    expect((await get(server, '/v1/sessions', behind)).status).toBe(401);
    expect((await get(server, '/v1/sessions', { ...behind, authorization: `Bearer ${key}` })).status).toBe(200);
  });

  it('stays locked when its last key is revoked, on loopback too, and says so', async () => {
    const db = join(tempDir(), 'r.db');
    const key = (await cli(['keys', 'create', '--db', db, '--project', 'alpha', '--scope', 'read'])).stdout.trim();
    const revoked = await cli(['keys', 'revoke', '--db', db, '1']);
    expect(revoked.code).toBe(0);
    expect(revoked.stderr).toContain('That was the last active key');
    const { server, lines } = await serve(db);
    expect(server.access).toBe('locked');
    expect(lines.find((l) => l.includes('event=access'))).toContain('every API key is revoked');
    const host = `127.0.0.1:${port(server)}`;
    expect((await get(server, '/v1/sessions', { host })).status).toBe(401);
    expect((await get(server, '/v1/sessions', { host, authorization: `Bearer ${key}` })).status).toBe(401);
    // Started again with the explicit flag (one server per database: the first stops), it opens again.
    await server.close();
    const { server: insecure } = await serve(db, { insecureNoAuth: true });
    expect(insecure.access).toBe('open');
    expect((await get(insecure, '/v1/sessions', { host: `127.0.0.1:${port(insecure)}` })).status).toBe(200);
  });
});

describe('the open or locked state is explicit', () => {
  it('in keys list', async () => {
    const db = join(tempDir(), 'k.db');
    const open = await cli(['keys', 'list', '--db', db]);
    expect(open.stdout).toMatch(/^Access: open\. No API key exists/);
    expect(open.stdout).toContain('none that came\nthrough a proxy');
    await cli(['keys', 'create', '--db', db, '--project', 'alpha', '--scope', 'read']);
    const locked = await cli(['keys', 'list', '--db', db]);
    expect(locked.stdout).toMatch(/^Access: locked\. Every request but \/healthz and \/readyz needs an active key\.\n1 {4}cb_/);
    await cli(['keys', 'revoke', '--db', db, '1']);
    expect((await cli(['keys', 'list', '--db', db])).stdout).toMatch(/^Access: locked\. Every key is revoked/);
    // --json stays a plain list of keys.
    expect(JSON.parse((await cli(['keys', 'list', '--db', db, '--json'])).stdout)).toHaveLength(1);
  });

  it('on the start line of `cachebreak serve`', async () => {
    const db = join(tempDir(), 's.db');
    const open = await startServerProcess({ db });
    expect(open.access).toBe('open');
    await open.stop();
    await cli(['keys', 'create', '--db', db, '--project', 'alpha', '--scope', 'read']);
    expect((await startServerProcess({ db })).access).toBe('locked');
  });

  it('--public-url takes URLs or names, and refuses what is neither', async () => {
    const parsed = await cli(['serve', '--public-url', 'https://x.example.com:8443/cb, y.example.com', '--help']);
    expect(parsed.code).toBe(0);
    const bad = await cli(['serve', '--public-url', 'https://', '--port', '0']);
    expect(bad).toMatchObject({ code: 2, stderr: expect.stringContaining('--public-url: expected URLs or host names separated by commas') });
  });
});
