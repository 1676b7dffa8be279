// `cachebreak import`: real NDJSON files into a real database, and into a
// real server over HTTP, with every rejected line named by FILE:LINE.
import { existsSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SERVICE_DETECTION } from '../../src/prices/index.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { SqliteStore } from '../../src/store/sqlite/store.js';
import { tempDir } from '../helpers.js';
import { cli } from './run.js';

const T = Date.parse('2026-11-30T10:00:00.000Z');
const TOOLS = [
  { name: 'read_file', schemaHash: 'a1' },
  { name: 'shell', schemaHash: 'b2' },
];

function turn(requestId: string, at: number, read: number, write: number) {
  return {
    type: 'turn',
    requestId,
    sessionId: 'sess_A',
    ts: new Date(T + at).toISOString(),
    provider: 'anthropic',
    model: 'claude-sonnet-4-5',
    systemHash: 'sys1',
    tools: TOOLS,
    usage: { input_tokens: 12, cache_read_input_tokens: read, cache_creation_input_tokens: write, output_tokens: 300 },
  };
}

/** Line by line: what each line of the file holds. */
const LINES = [
  JSON.stringify(turn('req_1', 0, 0, 40_000)), // 1: accepted
  JSON.stringify({ type: 'snapshot', requestId: 'req_2', sessionId: 'sess_A', ts: T + 30_000, model: 'claude-sonnet-4-5', systemHash: 'sys1', tools: TOOLS }), // 2: accepted
  '', // 3: blank, skipped
  JSON.stringify({ type: 'usage', requestId: 'req_2', ts: T + 34_000, provider: 'anthropic', cacheReadInputTokens: 40_000, cacheWriteInputTokens: 900, uncachedInputTokens: 10, outputTokens: 200 }), // 4: accepted
  JSON.stringify(turn('req_1', 0, 0, 40_000)), // 5: duplicate of line 1
  JSON.stringify({ type: 'turn', requestId: 'req_3' }), // 6: rejected, fields missing
  '{"type": "turn", "requestId": ', // 7: rejected, not JSON
];

let servers: RunningServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});

function eventsFile(lines: readonly string[] = LINES): string {
  const path = join(tempDir(), 'events.ndjson');
  writeFileSync(path, lines.join('\n') + '\n');
  return path;
}

async function turnsIn(db: string) {
  const store = new SqliteStore(db, SERVICE_DETECTION);
  try {
    return await store.sessionTurns('default', 'sess_A');
  } finally {
    await store.close();
  }
}

describe('cachebreak import into a database', () => {
  it('stores the good lines, counts the duplicate, and names each rejected line by FILE:LINE', async () => {
    const file = eventsFile();
    const db = join(tempDir(), 'cb.db');
    const first = await cli(['import', '--db', db, file]);
    expect(first.code).toBe(1);
    expect(first.stdout).toContain(`Imported 6 lines from 1 file into ${db} (project default): 3 accepted, 1 duplicate, 2 rejected.`);
    expect(first.stdout).toContain(`${file}:6: sessionId: required; ts: required; model: required\n`);
    expect(first.stdout).toContain(`${file}:7: not valid JSON`);
    expect(first.stdout).not.toMatch(/:(3|5):/);
    expect(first.stderr).toBe('');

    const turns = await turnsIn(db);
    expect(turns?.map((t) => [t.requestId, t.state])).toEqual([
      ['req_1', 'cold'],
      ['req_2', 'hit'],
    ]);

    const again = await cli(['import', '--db', db, file]);
    expect(again.code).toBe(1);
    expect(again.stdout).toContain('0 accepted, 4 duplicates, 2 rejected.');
    expect((await turnsIn(db))?.length).toBe(2);
  });

  it('exits 0 when every line is accepted or a duplicate, and reads - from standard input', async () => {
    const db = join(tempDir(), 'cb.db');
    const good = [LINES[0]!, LINES[1]!, LINES[3]!, LINES[0]!].join('\n');
    const result = await cli(['import', '--db', db, '-'], { stdin: good });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Imported 4 lines from 1 file');
    expect(result.stdout).toContain('3 accepted, 1 duplicate, 0 rejected.');
  });

  it('lists the first 20 rejections and counts the rest', async () => {
    const file = eventsFile(Array.from({ length: 25 }, (_, i) => JSON.stringify({ type: 'usage', requestId: `r${i}` })));
    const result = await cli(['import', '--db', join(tempDir(), 'cb.db'), file]);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(`${file}:20: usage: required`);
    expect(result.stdout).not.toContain(`${file}:21:`);
    expect(result.stdout).toContain('… and 5 more rejected lines');
  });

  it('is a usage error (exit 2) without a file or with a missing one, and creates no database', async () => {
    const db = join(tempDir(), 'cb.db');
    const none = await cli(['import', '--db', db]);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('name at least one NDJSON file');
    const missing = await cli(['import', '--db', db, join(tempDir(), 'nope.ndjson')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/cachebreak import: no such file: .*nope\.ndjson/);
    expect(existsSync(db)).toBe(false);
  });

  it('draws a progress bar on stderr only on a terminal', async () => {
    const file = eventsFile();
    const quiet = await cli(['import', '--db', join(tempDir(), 'a.db'), file]);
    expect(quiet.stderr).toBe('');
    const shown = await cli(['import', '--db', join(tempDir(), 'b.db'), '--batch', '2', file], { interactive: true });
    expect(shown.stderr).toContain('\r');
    // Bytes, not lines: a stream's line count is known only at its end.
    const size = statSync(file).size.toLocaleString('en-US');
    expect(shown.stderr).toContain(`${size}/${size} bytes 100%`);
    expect(shown.stdout).not.toContain('\r');
  });
});

describe('cachebreak import --server', () => {
  async function server(): Promise<RunningServer> {
    const running = await startServer(
      { host: '127.0.0.1', port: 0, db: join(tempDir(), 'server.db'), bodyLimit: 1 << 20, detection: SERVICE_DETECTION, synchronous: 'normal', project: 'default' },
      () => {},
    );
    servers.push(running);
    return running;
  }

  it('posts NDJSON batches and maps the server\'s rejections back to file lines', async () => {
    const { url } = await server();
    const file = eventsFile();
    // Batches of two: the rejected lines sit in the third request, after a blank line.
    const result = await cli(['import', '--server', url, '--batch', '2', file]);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(`into ${url}: 3 accepted, 1 duplicate, 2 rejected.`);
    // Every problem of the line, without the batch positions the server names them by.
    expect(result.stdout).toContain(`${file}:6: sessionId: required; ts: required; model: required\n`);
    expect(result.stdout).toContain(`${file}:7: not valid JSON`);

    const stored = (await (await fetch(`${url}/v1/sessions/sess_A/turns`)).json()) as { turns: { requestId: string }[] };
    expect(stored.turns.map((t) => t.requestId)).toEqual(['req_1', 'req_2']);
    const again = await cli(['import', '--server', url, file]);
    expect(again.stdout).toContain('0 accepted, 4 duplicates, 2 rejected.');
  });

  it('rejects every line of a batch the server cannot parse at all, and goes on', async () => {
    const { url } = await server();
    const file = eventsFile(['not json', '{nor this', LINES[0]!]);
    const result = await cli(['import', '--server', url, '--batch', '2', file]);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('1 accepted, 0 duplicates, 2 rejected.');
    expect(result.stdout).toContain(`${file}:1: body is not JSON`);
    expect(result.stdout).toContain(`${file}:2: body is not JSON`);
  });

  it('stops with exit 1 when the server cannot be reached', async () => {
    const { url } = await server();
    const running = servers.pop()!;
    await running.close();
    const result = await cli(['import', '--server', url, eventsFile()]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`cachebreak import: stopped: cannot reach ${url}`);
    expect(result.stdout).toContain('Imported 0 lines');
  });
});
