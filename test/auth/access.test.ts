// API keys: scopes, per-project tenancy, revocation, rate limits, and the
// rule that a server without keys is open only on loopback.
import { describe, expect, it } from 'vitest';
import { Authenticator } from '../../src/auth/authenticator.js';
import { main } from '../../src/cli/main.js';
import { SERVICE_DETECTION } from '../../src/prices/index.js';
import { startServer } from '../../src/server.js';
import { toWire, turn, usage } from '../core/scenario.js';
import { freshDb, openStore, storedText } from '../store-under-test.js';

async function cli(argv: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await main(argv, { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t), env: {}, interactive: false });
  return { code, stdout, stderr };
}

async function createKey(db: string, project: string, scope: string): Promise<string> {
  const { code, stdout, stderr } = await cli(['keys', 'create', '--db', db, '--project', project, '--scope', scope]);
  expect(code).toBe(0);
  expect(stderr).toContain('not shown again');
  return stdout.trim();
}

async function serve(db: string, rateLimit = 1000) {
  return startServer(
    { host: '127.0.0.1', port: 0, db, bodyLimit: 1 << 20, detection: SERVICE_DETECTION, synchronous: 'normal', project: 'default', rateLimit },
    () => {},
  );
}

describe('API keys', () => {
  it('are printed once and stored only as a hash', async () => {
    const db = await freshDb('k');
    const key = await createKey(db, 'alpha', 'ingest,read');
    expect(key).toMatch(/^cb_[A-Za-z0-9_-]{32}$/);
    const listed = await cli(['keys', 'list', '--db', db, '--json']);
    const [entry] = JSON.parse(listed.stdout);
    expect(entry).toMatchObject({ id: 1, project: 'alpha', scopes: ['ingest', 'read'], prefix: key.slice(0, 9), revokedMs: null });
    expect(listed.stdout).not.toContain(key);
    // Not in the database either (every file of it, or every column of every table).
    const stored = await storedText(db);
    expect(stored).toContain(key.slice(0, 9));
    expect(stored.includes(key)).toBe(false);
    expect((await cli(['keys', 'create', '--db', db, '--scope', 'write'])).stderr).toContain('unknown scope "write"');
  });

  it('scope every request to the key\'s project and refuse what the scope does not allow', async () => {
    const db = await freshDb('t');
    const alphaIngest = await createKey(db, 'alpha', 'ingest');
    const alphaRead = await createKey(db, 'alpha', 'read');
    const betaAdmin = await createKey(db, 'beta', 'admin');
    const server = await serve(db);
    const call = (path: string, key: string | undefined, body?: unknown) =>
      fetch(`${server.url}${path}`, {
        method: body ? 'POST' : 'GET',
        headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...(body ? { 'content-type': 'application/json' } : {}) },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
    try {
      const events = { events: [toWire(turn('a1', { usage: usage(0, 9_000) }))] };
      expect((await call('/v1/events', alphaIngest, events)).status).toBe(200);

      const missing = await call('/v1/sessions', undefined);
      expect(missing.status).toBe(401);
      expect(missing.headers.get('www-authenticate')).toContain('Basic');
      expect(((await missing.json()) as any).error.message).toBe('an API key is required');
      expect((await call('/v1/sessions', 'cb_not_a_real_key_at_all_000000000')).status).toBe(401);

      const readOnIngest = await call('/v1/events', alphaRead, events);
      expect(readOnIngest.status).toBe(403);
      expect(((await readOnIngest.json()) as any).error.message).toBe('this key has scope read; this request needs ingest');
      expect((await call('/v1/sessions', alphaIngest)).status).toBe(403);

      const sessions = async (key: string) => ((await (await call('/v1/sessions', key)).json()) as any).sessions.map((s: any) => s.sessionId);
      expect(await sessions(alphaRead)).toEqual(['sess_A']);
      expect(await sessions(betaAdmin)).toEqual([]);
      // Basic auth with the key as password, as a browser or Grafana sends it.
      const basic = await fetch(`${server.url}/v1/sessions`, { headers: { authorization: `Basic ${Buffer.from(`x:${alphaRead}`).toString('base64')}` } });
      expect(basic.status).toBe(200);
      // Health checks carry no data and stay open.
      expect((await call('/healthz', undefined)).status).toBe(200);

      // Revoked: refused within a second.
      expect((await cli(['keys', 'revoke', '--db', db, alphaRead.slice(0, 9)])).code).toBe(0);
      expect((await call('/v1/sessions', alphaRead)).status).toBe(401);
    } finally {
      await server.close();
    }
  });

  it('limit each key\'s request rate with 429 and Retry-After', async () => {
    const db = await freshDb('r');
    const key = await createKey(db, 'alpha', 'read');
    const server = await serve(db, 2);
    try {
      const statuses: number[] = [];
      let retryAfter: string | null = null;
      for (let i = 0; i < 8; i++) {
        const response = await fetch(`${server.url}/v1/sessions`, { headers: { authorization: `Bearer ${key}` } });
        statuses.push(response.status);
        if (response.status === 429) retryAfter = response.headers.get('retry-after');
      }
      // A burst of twice the rate, then refusals.
      expect(statuses.slice(0, 4)).toEqual([200, 200, 200, 200]);
      expect(statuses).toContain(429);
      expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
    } finally {
      await server.close();
    }
  });

  it('must exist before the server listens beyond loopback', async () => {
    const db = await freshDb('o');
    await expect(
      startServer({ host: '0.0.0.0', port: 0, db, bodyLimit: 1 << 20, detection: SERVICE_DETECTION, synchronous: 'normal', project: 'default' }, () => {}),
    ).rejects.toThrow(/refusing to serve 0\.0\.0\.0 with no API keys/);
  });

  it('once the last key is revoked, stay locked, on loopback too; open only with --insecure-no-auth', async () => {
    const db = await freshDb('r');
    const key = await createKey(db, 'alpha', 'read');
    const store = await openStore(db);
    let now = 0;
    const authenticator = (openWithoutKeys: boolean, insecureNoAuth = false) =>
      new Authenticator(store, { openProject: 'default', openWithoutKeys, insecureNoAuth, rateLimit: { perSecond: 100, burst: 100 }, now: () => now });
    // Beyond loopback (no --insecure-no-auth), on loopback, and with --insecure-no-auth.
    const [remote, local, insecure] = [authenticator(false), authenticator(true), authenticator(true, true)];
    try {
      for (const auth of [remote, local, insecure]) expect(await auth.authorize(`Bearer ${key}`, 'read')).toEqual({ project: 'alpha', keyId: 1 });
      await expect(remote.authorize(undefined, 'read')).rejects.toThrow('an API key is required');
      expect((await cli(['keys', 'revoke', '--db', db, '1'])).code).toBe(0);
      now += 1_000; // whether any key is active is asked again after a second
      for (const auth of [remote, local]) {
        await expect(auth.authorize(undefined, 'read')).rejects.toThrow('an API key is required');
        await expect(auth.authorize(`Bearer ${key}`, 'read')).rejects.toThrow('unknown or revoked API key');
        expect(await auth.access()).toBe('locked');
      }
      expect(await insecure.authorize(undefined, 'ingest')).toEqual({ project: 'default', keyId: null });
      expect(await insecure.access()).toBe('open');
    } finally {
      await store.close();
    }
  });
});
