// The proxy follows the server's access rules: it binds to loopback unless
// keys exist (or --insecure-no-auth), and a server with keys forwards only
// calls that carry a cachebreak key in x-cachebreak-key, which never leaves
// the proxy; their turns are stored under that key's project.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli } from '../cli/run.js';
import { tempDir } from '../helpers.js';
import { send } from './client.js';
import { startProxyHarness } from './harness.js';
import { waitFor } from './wait.js';

const body = JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] });

describe('proxy access', () => {
  it('refuses to listen on an address other than loopback when the database has no key', async () => {
    const db = join(tempDir(), 'cachebreak.db');
    const result = await cli(['proxy', '--host', '0.0.0.0', '--port', '0', '--proxy-port', '0', '--grpc-port', 'off', '--db', db]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^cachebreak proxy: refusing to serve 0\.0\.0\.0 with no API keys/);
  });

  it('with keys, forwards only calls with a valid x-cachebreak-key, strips it, and stores under its project', async () => {
    const db = join(tempDir(), 'cachebreak.db');
    const created = await cli(['keys', 'create', '--db', db, '--project', 'team', '--scope', 'ingest,read']);
    expect(created.code).toBe(0);
    const key = created.stdout.trim();
    const h = await startProxyHarness({ db });
    h.openai.usage = { prompt_tokens: 3_000, prompt_tokens_details: { cached_tokens: 0 } };

    const missing = await send(h.proxy, 'POST', '/openai/v1/chat/completions', { authorization: 'Bearer sk-provider' }, body);
    expect(missing.status).toBe(401);
    expect(JSON.parse(missing.body.toString()).error.hint).toContain('x-cachebreak-key');
    const wrong = await send(h.proxy, 'POST', '/openai/v1/chat/completions', { 'x-cachebreak-key': 'cb_wrongwrongwrongwrongwrongwrongwr' }, body);
    expect(wrong.status).toBe(401);
    expect(h.openai.received).toHaveLength(0);

    const ok = await send(h.proxy, 'POST', '/openai/v1/chat/completions', { authorization: 'Bearer sk-provider', 'x-cachebreak-key': key, 'x-cachebreak-session': 'keyed' }, body);
    expect(ok.status).toBe(200);
    expect(h.openai.received[0]!.headers['x-cachebreak-key']).toBeUndefined();
    expect(h.openai.received[0]!.headers.authorization).toBe('Bearer sk-provider');
    const read = async () => {
      const response = await fetch(`${h.server.url}/v1/sessions`, { headers: { authorization: `Bearer ${key}` } });
      return ((await response.json()) as { sessions: { sessionId: string }[] }).sessions;
    };
    expect(await waitFor('the turn stored under the key', read, (sessions) => sessions.length === 1)).toMatchObject([{ sessionId: 'keyed' }]);
    expect(h.log.join('\n')).not.toContain(key);
  });

  it('decides from the keys in memory: a key revoked or created while it runs counts within a second or two', async () => {
    const db = join(tempDir(), 'cachebreak.db');
    const first = (await cli(['keys', 'create', '--db', db, '--project', 'team', '--scope', 'ingest'])).stdout.trim();
    const h = await startProxyHarness({ db });
    const call = (key: string) => send(h.proxy, 'POST', '/openai/v1/chat/completions', { 'x-cachebreak-key': key }, body).then((answer) => answer.status);
    expect(await call(first)).toBe(200);
    expect((await cli(['keys', 'revoke', first.slice(0, 9), '--db', db])).code).toBe(0);
    const second = (await cli(['keys', 'create', '--db', db, '--project', 'team', '--scope', 'ingest'])).stdout.trim();
    const started = Date.now();
    await waitFor('the revoked key refused and the new one taken', async () => [await call(first), await call(second)], (statuses) => statuses.join() === '401,200', 5_000);
    expect(Date.now() - started).toBeLessThan(3_000);
  });
});
