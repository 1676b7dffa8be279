// `cachebreak tail` as a user runs it: clear usage errors, --server (events
// and harness-reported breaks posted, checkpoints kept locally so a restart
// sends nothing again), and `serve --tail` following files inside a real
// server process.
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SERVICE_DETECTION } from '../../src/prices/index.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { getJson, startServer as startServerProcess } from '../e2e/server.js';
import { tempDir } from '../helpers.js';
import { waitFor } from '../tail/harness.js';
import { claudeDebugLog, turns } from '../tail/workload.js';
import { cli } from './run.js';

const servers: RunningServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});

function countRows(db: string, table: string): number {
  const sqlite = new Database(db, { readonly: true });
  try {
    return (sqlite.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
  } finally {
    sqlite.close();
  }
}

interface Listed {
  breaks: { sessionId: string; reason: string; callNumber: number }[];
}

describe('cachebreak tail: usage', () => {
  it('explains itself, and refuses what cannot work before following anything', async () => {
    const help = await cli(['tail', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Usage: cachebreak tail [options] PATH|GLOB…');
    expect(help.stdout).toContain('--format FORMAT');
    expect(help.stdout).toContain('claude-debug');

    const dir = tempDir();
    const none = await cli(['tail', '--db', join(dir, 'a.db')]);
    expect(none).toMatchObject({ code: 2, stderr: expect.stringContaining('name at least one file or glob to follow') });
    const directory = await cli(['tail', '--db', join(dir, 'a.db'), dir]);
    expect(directory).toMatchObject({ code: 2, stderr: expect.stringContaining(`${dir} is a directory; follow the files in it with a glob such as "${dir}/*.txt"`) });
    const print = await cli(['tail', '--server', 'http://127.0.0.1:1', '--print', join(dir, '*.txt')]);
    expect(print).toMatchObject({ code: 2, stderr: expect.stringContaining('--print needs --db') });
    const format = await cli(['tail', '--format', 'xml', join(dir, '*.txt')]);
    expect(format).toMatchObject({ code: 2, stderr: expect.stringContaining('--format: expected one of auto, ndjson, otel-file, claude-debug, qwen-debug, qwen-openai, got "xml"') });
  });

  it('says when a path does not exist yet, and follows it once it appears', async () => {
    const dir = tempDir();
    const path = join(dir, 'later', 'events.ndjson');
    const stop = new AbortController();
    const run = cli(['tail', '--db', join(dir, 'a.db'), path, join(dir, 'logs', '*.txt')], { signal: stop.signal });
    await new Promise((resolve) => setTimeout(resolve, 300));
    mkdirSync(join(dir, 'later'));
    writeFileSync(path, turns('sess-late', 3).text);
    await waitFor('the checkpoint', () => {
      try {
        return readdirSync(dir).includes('a.db') && countRows(join(dir, 'a.db'), 'turns') === 3 ? true : undefined;
      } catch {
        return undefined;
      }
    });
    stop.abort();
    const result = await run;
    expect(result.code).toBe(0);
    expect(result.stderr).toContain(`cachebreak tail: ${path} does not exist yet; it is followed from when it appears`);
    // What it watches, one line per path or glob, before anything it read.
    const watching = result.stderr.split('\n').filter((line) => line.startsWith('cachebreak tail: watching'));
    expect(watching).toEqual([
      `cachebreak tail: watching ${path} (files not seen before from their end; format auto) → ${join(dir, 'a.db')} (project default)`,
      `cachebreak tail: watching ${join(dir, 'logs', '*.txt')} (a glob, files matching now and later; files not seen before from their end; format auto) → ${join(dir, 'a.db')} (project default)`,
    ]);
    expect(result.stderr.indexOf('watching')).toBeLessThan(result.stderr.indexOf('3 events stored'));
    expect(result.stderr).toContain('3 events stored');
  });
});

describe('cachebreak tail --server', () => {
  it('posts events and harness-reported breaks; a restart resumes from the local checkpoints', async () => {
    const server = await startServer(
      { host: '127.0.0.1', port: 0, db: join(tempDir(), 'server.db'), bodyLimit: 1 << 20, detection: SERVICE_DETECTION, synchronous: 'normal', project: 'default' },
      () => {},
    );
    servers.push(server);
    const dir = tempDir();
    const events = turns('sess-s', 30);
    const log = claudeDebugLog(4);
    writeFileSync(join(dir, 'events.ndjson'), events.text);
    writeFileSync(join(dir, 'sess-claude.txt'), log.text);
    const args = ['tail', '--server', server.url, '--db', join(dir, 'checkpoints.db'), '--from-start', '--batch', '7', join(dir, '*.ndjson'), join(dir, '*.txt')];

    const stop = new AbortController();
    const run = cli(args, { signal: stop.signal });
    const stored = await waitFor('30 turns on the server', async () => {
      const body = await getJson<{ turns: { requestId: string; state: string }[] }>(server.url, '/v1/sessions/sess-s/turns').catch(() => undefined);
      return body?.turns.length === 30 ? body.turns : undefined;
    });
    await waitFor('4 reports on the server', async () => ((await getJson<Listed>(server.url, '/v1/breaks/external')).breaks.length === 4 ? true : undefined));
    await new Promise((resolve) => setTimeout(resolve, 1200));
    stop.abort();
    const first = await run;
    expect(first.code).toBe(0);
    expect(first.stderr).toContain('30 events stored, 0 duplicates, 4 harness-reported breaks, 0 rejected');
    expect(stored.filter((t) => t.state === 'miss').map((t) => t.requestId)).toEqual(Object.keys(events.breaks));
    const reported = await getJson<Listed>(server.url, '/v1/breaks/external');
    expect(reported.breaks.map((b) => [b.sessionId, b.callNumber])).toEqual(log.breaks.map((b) => ['sess-claude', b.callNumber]).reverse());

    const restop = new AbortController();
    const again = cli(args, { signal: restop.signal });
    await new Promise((resolve) => setTimeout(resolve, 1500));
    restop.abort();
    expect((await again).stderr).toContain('0 lines or objects read (0 bytes), 0 events stored');
  });
});

describe('cachebreak serve --tail', () => {
  it('follows files inside the server until it stops', async () => {
    const dir = tempDir();
    const server = await startServerProcess({ args: ['--tail', join(dir, '*.ndjson'), '--tail', join(dir, 'debug', '*.txt')] });
    mkdirSync(join(dir, 'debug'));
    const events = turns('sess-served', 15);
    writeFileSync(join(dir, 'events.ndjson'), events.text);
    writeFileSync(join(dir, 'debug', 'sess-c.txt'), claudeDebugLog(2).text);
    const states = await waitFor('15 turns', async () => {
      const body = await getJson<{ turns: { state: string }[] }>(server.url, '/v1/sessions/sess-served/turns').catch(() => undefined);
      return body?.turns.length === 15 ? body.turns.map((t) => t.state) : undefined;
    });
    expect(states.filter((s) => s === 'miss')).toHaveLength(Object.keys(events.breaks).length);
    await waitFor('2 reports', async () => ((await getJson<Listed>(server.url, '/v1/breaks/external')).breaks.length === 2 ? true : undefined));
    expect(await server.stop()).toEqual({ code: 0, signal: null });
    expect(server.stderrLines.some((l) => l.includes('event=tail_started'))).toBe(true);
  });
});
