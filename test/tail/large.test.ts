// A 100 MB NDJSON file read with --from-start through the command, as a user
// runs it on a terminal: every turn and break stored, a progress bar drawn.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers.js';
import { cli } from '../cli/run.js';
import { waitFor } from './harness.js';
import { turns } from './workload.js';

const MB = 1e6;

function count(db: string, sql: string): number {
  const sqlite = new Database(db, { readonly: true, fileMustExist: true });
  try {
    return (sqlite.prepare(sql).get() as { n: number }).n;
  } catch {
    return -1;
  } finally {
    sqlite.close();
  }
}

describe('a 100 MB file from the start', () => {
  it('stores every turn and break, with a progress bar on a terminal', { timeout: 120_000 }, async () => {
    const dir = tempDir();
    const path = join(dir, 'big.ndjson');
    const db = join(dir, 'cachebreak.db');
    // Long tool lists make each line about 2 KB, like a harness with many MCP tools.
    const sessions = Array.from({ length: 10 }, (_, s) => turns(`sess-big-${s}`, 5_000, { padTools: 40 }));
    const text = sessions.map((s) => s.text).join('');
    writeFileSync(path, text);
    const size = Buffer.byteLength(text);
    expect(size).toBeGreaterThan(100 * MB);
    const expectedBreaks = sessions.reduce((n, s) => n + Object.keys(s.breaks).length, 0);

    const started = performance.now();
    const stop = new AbortController();
    const run = cli(['tail', '--db', db, '--from-start', '--print', path], { interactive: true, signal: stop.signal });
    await waitFor('every turn stored', () => (count(db, 'SELECT count(*) AS n FROM turns') === 50_000 ? true : undefined), 90_000);
    await waitFor('the checkpoint at the end', () => (count(db, 'SELECT max(offset) AS n FROM tail_checkpoints') === size ? true : undefined));
    const seconds = (performance.now() - started) / 1000;
    stop.abort();
    const result = await run;

    expect(result.code).toBe(0);
    expect(count(db, 'SELECT count(*) AS n FROM breaks')).toBe(expectedBreaks);
    expect(result.stdout.trimEnd().split('\n')).toHaveLength(expectedBreaks);
    expect(result.stdout).toMatch(/^ts=\S+ level=warn event=prompt_cache_break project=default reason=tools_order_changed session=sess-big-\d agent=main request=sess-big-\d-r3 previousRequest=sess-big-\d-r2 /);
    expect(result.stderr).toMatch(/\rbig\.ndjson \[#+-*\] [\d,]+\/[\d,]+ MB \d+%/);
    expect(result.stderr).toContain(`Followed 1 file into ${db} (project default): 50,000 lines or objects read (${size.toLocaleString('en-US')} bytes), 50,000 events stored, 0 duplicates`);
    expect(seconds).toBeLessThan(60);
  });
});
