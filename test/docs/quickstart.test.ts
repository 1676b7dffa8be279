// The README's curl example, run as written (only the port differs) against
// a real server: what a new user does first must work.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SERVICE_DETECTION } from '../../src/prices/index.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { tempDir } from '../helpers.js';
import { README } from './readme.js';

let server: RunningServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('README quick start', () => {
  it('sends a snapshot and a usage record per turn with curl and reads the break back', async () => {
    const readme = readFileSync(README, 'utf8');
    const example = /```sh\n((?:NOW=[^\n]*\n)?curl -s http:\/\/127\.0\.0\.1:4318\/v1\/events[\s\S]*?)```/.exec(readme)?.[1];
    expect(example).toBeDefined();
    const logs: string[] = [];
    server = await startServer(
      { host: '127.0.0.1', port: 0, db: join(tempDir(), 'q.db'), bodyLimit: 1 << 20, detection: SERVICE_DETECTION, synchronous: 'normal', project: 'default' },
      (line) => logs.push(line),
    );
    const script = example!.replaceAll('http://127.0.0.1:4318', server.url);
    // Asynchronously: the server runs in this process and must stay free to answer.
    const { stdout: output } = await promisify(execFile)('sh', ['-c', script], { timeout: 10_000 });
    const [ingest, breaks] = output.split(/(?<=\})(?=\{)/);
    expect(JSON.parse(ingest!)).toEqual({ accepted: 4, duplicates: 0, rejected: [] });
    const record = JSON.parse(breaks!).breaks[0];
    expect(record).toMatchObject({
      requestId: 'req_07',
      reason: 'tools_order_changed',
      changedToolNames: ['mcp__filesystem__read_tree', 'mcp__github__search_issues'],
      previousCacheReadTokens: 48_000,
      currentCacheReadTokens: 0,
    });
    expect(logs.filter((l) => l.includes('event=prompt_cache_break'))).toHaveLength(1);
    // The turns are a minute old, not on a fixed date: the page and the dashboards (last 24 hours by default) show them.
    expect(Date.now() - Date.parse(record.ts)).toBeGreaterThan(0);
    expect(Date.now() - Date.parse(record.ts)).toBeLessThan(5 * 60_000);
    const sessions = await (await fetch(`${server.url}/grafana/values?dimension=sessionId`)).json();
    expect(sessions).toEqual([{ value: 'sess_A' }]);
  });
});
