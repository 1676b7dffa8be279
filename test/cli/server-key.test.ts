// `import --server` and `tail --server` against a server with API keys: the
// key comes from CACHEBREAK_KEY (or --key) and is never printed, not even
// when it was put in the URL; a key the server refuses stops `tail` with a
// clear error instead of retrying the same batch forever.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SERVICE_DETECTION } from '../../src/prices/index.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { tempDir } from '../helpers.js';
import { waitFor } from '../tail/harness.js';
import { turns } from '../tail/workload.js';
import { cli } from './run.js';

const servers: RunningServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});

/** A locked server, with a key of each scope. */
async function lockedServer() {
  const db = join(tempDir(), 'server.db');
  const create = async (scope: string) => (await cli(['keys', 'create', '--db', db, '--project', 'alpha', '--scope', scope])).stdout.trim();
  const ingest = await create('ingest');
  const read = await create('read');
  const server = await startServer({ host: '127.0.0.1', port: 0, db, bodyLimit: 1 << 20, detection: SERVICE_DETECTION, synchronous: 'normal', project: 'default', readWorkers: 0 }, () => {});
  servers.push(server);
  const turnsOf = async (session: string) => {
    const response = await fetch(`${server.url}/v1/sessions/${session}/turns`, { headers: { authorization: `Bearer ${read}` } });
    return response.status === 200 ? ((await response.json()) as { turns: unknown[] }).turns.length : 0;
  };
  return { server, db, ingest, read, turnsOf };
}

function eventsFile(session: string, count = 3): string {
  const file = join(tempDir(), `${session}.ndjson`);
  writeFileSync(file, turns(session, count).text);
  return file;
}

const everything = (result: { stdout: string; stderr: string }) => result.stdout + result.stderr;

describe('import --server with API keys', () => {
  it('sends the key from CACHEBREAK_KEY or --key, and stores the events', async () => {
    const { server, ingest, turnsOf } = await lockedServer();
    const fromEnv = await cli(['import', '--server', server.url, eventsFile('env')], { env: { CACHEBREAK_KEY: ingest } });
    expect(fromEnv.code).toBe(0);
    expect(fromEnv.stdout).toContain('3 accepted');
    const fromFlag = await cli(['import', '--server', server.url, '--key', ingest, eventsFile('flag')]);
    expect(fromFlag.code).toBe(0);
    expect(await turnsOf('env')).toBe(3);
    expect(await turnsOf('flag')).toBe(3);
    for (const result of [fromEnv, fromFlag]) expect(everything(result)).not.toContain(ingest);
  });

  it('stops with what to do when the key is missing, unknown or of the wrong scope, never printing it', async () => {
    const { server, ingest, read } = await lockedServer();
    const none = await cli(['import', '--server', server.url, eventsFile('none')]);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain(`stopped: ${server.url}/v1/events answered 401 (an API key is required): pass an API key with scope ingest in CACHEBREAK_KEY (or --key)`);

    const wrong = `${ingest.slice(0, -4)}AAAA`;
    const unknown = await cli(['import', '--server', server.url, eventsFile('unknown')], { env: { CACHEBREAK_KEY: wrong } });
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain(`answered 401 (unknown or revoked API key) for the key ${wrong.slice(0, 9)}…: check CACHEBREAK_KEY`);
    expect(everything(unknown)).not.toContain(wrong);

    const scope = await cli(['import', '--server', server.url, eventsFile('scope')], { env: { CACHEBREAK_KEY: read } });
    expect(scope.code).toBe(1);
    expect(scope.stderr).toContain('answered 403 (this key has scope read; this request needs ingest): create a key with --scope ingest for this');
    expect(everything(scope)).not.toContain(read);
  });

  it('refuses a key in the URL without printing it, however the URL is spelled', async () => {
    const { server, ingest } = await lockedServer();
    const { host } = new URL(server.url);
    for (const url of [`http://${ingest}@${host}`, `http://user:${ingest}@${host}`, `http://user:${ingest}@${host}:bad`]) {
      const result = await cli(['import', '--server', url, eventsFile('url')]);
      expect(result.code, url).toBe(2);
      expect(everything(result)).not.toContain(ingest);
      expect(result.stderr).toMatch(/--server: (the URL carries credentials|expected a URL)/);
    }
    const fromEnv = await cli(['import', eventsFile('url')], { env: { CACHEBREAK_SERVER: `http://x:${ingest}@${host}` } });
    expect(fromEnv.code).toBe(2);
    expect(everything(fromEnv)).not.toContain(ingest);
  });
});

describe('tail --server with API keys', () => {
  it('stops at once with exit 1 and what to do when the server refuses the key, instead of retrying forever', async () => {
    const { server, read } = await lockedServer();
    for (const env of [{}, { CACHEBREAK_KEY: read }] as Record<string, string>[]) {
      const dir = tempDir();
      writeFileSync(join(dir, 'a.ndjson'), turns('t', 3).text);
      const stop = new AbortController();
      // A safety net only: the tail must end by itself long before.
      const timer = setTimeout(() => stop.abort(), 10_000);
      const started = Date.now();
      const result = await cli(['tail', '--server', server.url, '--db', join(dir, 'checkpoints.db'), '--from-start', join(dir, '*.ndjson')], { env, signal: stop.signal });
      clearTimeout(timer);
      expect(stop.signal.aborted).toBe(false);
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(/cachebreak tail: stopped: http:\/\/127\.0\.0\.1:\d+\/v1\/events answered 40[13]/);
      expect(result.stderr).not.toContain('retrying');
      if (env.CACHEBREAK_KEY) expect(everything(result)).not.toContain(env.CACHEBREAK_KEY);
    }
  });

  it('stops when the key is revoked while it runs, and sends with a good key', async () => {
    const { server, db, ingest, turnsOf } = await lockedServer();
    const dir = tempDir();
    const file = join(dir, 'a.ndjson');
    writeFileSync(file, turns('live', 3).text);
    const stop = new AbortController();
    const timer = setTimeout(() => stop.abort(), 15_000);
    const run = cli(['tail', '--server', server.url, '--db', join(dir, 'checkpoints.db'), '--from-start', join(dir, '*.ndjson')], { env: { CACHEBREAK_KEY: ingest }, signal: stop.signal });
    await waitFor('3 turns on the server', async () => ((await turnsOf('live')) === 3 ? true : undefined));
    expect((await cli(['keys', 'revoke', '--db', db, '1'])).code).toBe(0);
    // Whether a key is active is asked again after a second.
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    writeFileSync(file, turns('live2', 3).text, { flag: 'a' });
    const result = await run;
    clearTimeout(timer);
    expect(stop.signal.aborted).toBe(false);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('answered 401 (unknown or revoked API key)');
    expect(result.stderr).toContain('3 events stored');
    expect(everything(result)).not.toContain(ingest);
  });
});
