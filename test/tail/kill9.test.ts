// `cachebreak tail` killed with SIGKILL in the middle of its files, while a
// writer still appends, then started again: every turn, break and
// harness-reported break is stored exactly once. The restart resumes from
// the checkpoints stored with the data, so it sends nothing twice (it
// reports 0 duplicates: the dedupe by requestId is never needed).
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { SERVICE_DETECTION } from '../../src/prices/index.js';
import { SqliteStore } from '../../src/store/sqlite/store.js';
import { CLI } from '../e2e/process.js';
import { tempDir } from '../helpers.js';
import { allBreaks, externalBreaks, startWriter, turnStates, waitFor } from './harness.js';
import { referenceStore } from './reference.js';
import { claudeDebugLog, outfile, T0, turns } from './workload.js';

const children = new Set<ChildProcess>();
afterEach(() => {
  for (const child of children) child.kill('SIGKILL');
  children.clear();
});

interface Run {
  child: ChildProcess;
  stderr: string[];
  exited: Promise<number | null>;
}

function tail(args: string[]): Run {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run "npm run build" first`);
  const child = spawn(process.execPath, [CLI, 'tail', ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  children.add(child);
  const stderr: string[] = [];
  child.stderr!.on('data', (chunk: Buffer) => stderr.push(chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, stderr, exited };
}

function storedTurns(db: string): number {
  if (!existsSync(db)) return 0;
  const sqlite = new Database(db, { readonly: true });
  try {
    return (sqlite.prepare("SELECT count(*) AS n FROM sqlite_master WHERE name = 'turns'").get() as { n: number }).n === 0
      ? 0
      : (sqlite.prepare('SELECT count(*) AS n FROM turns').get() as { n: number }).n;
  } finally {
    sqlite.close();
  }
}

/** How far each file's checkpoint is, as a share of its size. */
function checkpointShare(db: string, dir: string): Record<string, number> {
  const sqlite = new Database(db, { readonly: true });
  try {
    const rows = sqlite.prepare('SELECT path, offset FROM tail_checkpoints').all() as { path: string; offset: number }[];
    return Object.fromEntries(rows.map((r) => [relative(dir, r.path), r.offset / statSync(r.path).size]));
  } finally {
    sqlite.close();
  }
}

describe('kill -9 and restart', () => {
  it('loses nothing and stores nothing twice', { timeout: 120_000 }, async () => {
    const dir = tempDir();
    const db = join(dir, 'cachebreak.db');
    const events = turns('sess-k1', 2500);
    const more = turns('sess-k2', 1500, { at: T0 + 5000 });
    const appended = turns('sess-k3', 400, { at: T0 + 9000 });
    const log = claudeDebugLog(300);
    const gemini = outfile('gemini-cli-0.61.0.log', 150);
    writeFileSync(join(dir, 'a.ndjson'), events.text);
    writeFileSync(join(dir, 'b.ndjson'), more.text);
    writeFileSync(join(dir, 'live.ndjson'), '');
    writeFileSync(join(dir, 'sess-k.txt'), log.text);
    writeFileSync(join(dir, 'gemini.log'), gemini.text);
    const args = ['--db', db, '--from-start', '--batch', '20', join(dir, '*.ndjson'), join(dir, '*.txt'), join(dir, '*.log')];

    const reference = await referenceStore({ ndjson: [events.text, more.text, appended.text], outfiles: [gemini.text] });
    const sessions = ['sess-k1', 'sess-k2', 'sess-k3', ...gemini.sessions];
    const expected = await turnStates(reference, sessions);
    const total = Object.keys(expected).length;
    expect(total).toBe(2500 + 1500 + 400 + 150 * 6);

    const first = tail(args);
    const writer = startWriter();
    const writing = writer.run({ op: 'append', path: join(dir, 'live.ndjson'), data: appended.text, maxChunk: 500, delayMs: 2 });
    await waitFor('a third of the turns', () => (storedTurns(db) > total / 3 ? true : undefined));
    first.child.kill('SIGKILL');
    await first.exited;
    const midway = [checkpointShare(db, dir)];
    const second = tail(args);
    await waitFor('two thirds of the turns', () => (storedTurns(db) > (2 * total) / 3 ? true : undefined));
    second.child.kill('SIGKILL');
    await second.exited;
    midway.push(checkpointShare(db, dir));
    expect(storedTurns(db)).toBeLessThan(total);
    // At least one kill fell inside the outfile and inside the debug log (where pairs and checkpoints matter most).
    expect(midway.some((m) => m['gemini.log']! > 0 && m['gemini.log']! < 1)).toBe(true);

    const third = tail(args);
    await writing;
    await waitFor('every turn', () => (storedTurns(db) === total ? true : undefined), 60_000);
    // What is left after the last turn (the debug log's last lines) is read too: wait for the checkpoints to reach the ends.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    third.child.kill('SIGTERM');
    expect(await third.exited).toBe(0);
    const summary = third.stderr.join('');
    expect(summary).toMatch(/events stored, 0 duplicates, /);

    const store = new SqliteStore(db, SERVICE_DETECTION);
    try {
      expect(await turnStates(store, sessions)).toEqual(expected);
      for (const session of gemini.sessions.slice(0, 5)) {
        expect(await store.sessionTurns('default', session)).toEqual(await reference.sessionTurns('default', session));
      }
      expect(await allBreaks(store)).toEqual(await allBreaks(reference));
      expect(Object.keys(await allBreaks(store)).filter((id) => id.startsWith('sess-k'))).toHaveLength(
        Object.keys({ ...events.breaks, ...more.breaks, ...appended.breaks }).length,
      );
      const reported = await externalBreaks(store);
      expect(reported.map((b) => [b.callNumber, b.line])).toEqual(log.breaks.map((b) => [b.callNumber, b.line]));
      // Stream sums and rollups count each turn once.
      const sessionsPage = await store.sessions('default', {}, { sessionId: ['sess-k1', 'sess-k2', 'sess-k3'] }, { limit: 10 });
      expect(Object.fromEntries(sessionsPage.items.map((s) => [s.sessionId, s.turns]))).toEqual({ 'sess-k1': 2500, 'sess-k2': 1500, 'sess-k3': 400 });
    } finally {
      await store.close();
    }
  });
});
