// Following real files while another process writes them: appends in small
// random chunks (lines and JSON objects split anywhere), rotation by rename,
// copytruncate, a `latest` link that switches, files that appear under a
// glob, deletion. Each test asserts the exact turns and breaks stored.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { freshStore, tempDir } from '../helpers.js';
import { allBreaks, externalBreaks, follow, startWriter, turnStates, waitFor } from './harness.js';
import { referenceStore } from './reference.js';
import { claudeDebugLog, outfile, T0, turns } from './workload.js';
import type { SqliteStore } from '../../src/store/sqlite/store.js';

/** Waits until the store holds `count` turns of the sessions; returns their states. */
function turnsStored(store: SqliteStore, sessions: string[], count: number) {
  return waitFor(`${count} turns`, async () => {
    const states = await turnStates(store, sessions);
    const n = Object.keys(states).length;
    if (n > count) throw new Error(`more turns than written: ${n} > ${count}`);
    return n === count ? states : undefined;
  });
}

describe('appends', () => {
  it('reads every line and object exactly once, however the writer splits them', async () => {
    const dir = tempDir();
    const paths = { events: join(dir, 'events.ndjson'), debug: join(dir, 'sess-claude.txt'), qwen: join(dir, 'qwen.log'), gemini: join(dir, 'gemini.log') };
    for (const path of Object.values(paths)) writeFileSync(path, '');
    const store = freshStore();
    const following = await follow(store, [join(dir, '*.ndjson'), join(dir, '*.txt'), join(dir, '*.log')], { batch: 25 });

    const a = turns('sess-a', 120);
    const b = turns('sess-b', 90, { at: T0 + 1000 });
    const log = claudeDebugLog(12);
    const qwen = outfile('qwen-code-0.24.4.log', 4);
    const gemini = outfile('gemini-cli-0.61.0.log', 4);
    const writer = startWriter();
    await writer.run(
      { op: 'append', path: paths.events, data: a.text, seed: 1, maxChunk: 150, delayMs: 1 },
      { op: 'append', path: paths.qwen, data: qwen.text, seed: 2, maxChunk: 300, delayMs: 1 },
      { op: 'append', path: paths.debug, data: log.text, seed: 3, maxChunk: 40, delayMs: 1 },
      { op: 'append', path: paths.events, data: b.text, seed: 4, maxChunk: 150, delayMs: 1 },
      { op: 'append', path: paths.gemini, data: gemini.text, seed: 5, maxChunk: 300, delayMs: 1 },
    );

    const reference = await referenceStore({ ndjson: [a.text, b.text], outfiles: [qwen.text, gemini.text] });
    const sessions = ['sess-a', 'sess-b', ...qwen.sessions, ...gemini.sessions];
    const expected = await turnStates(reference, sessions);
    const states = await turnsStored(store, sessions, Object.keys(expected).length);
    await following.tailer.settled();
    expect(states).toEqual(expected);
    expect(Object.keys(states)).toHaveLength(120 + 90 + 4 * 6 + 4 * 6);
    const breaks = await allBreaks(store);
    expect(breaks).toEqual(await allBreaks(reference));
    expect(Object.fromEntries(Object.entries(breaks).filter(([id]) => id.startsWith('sess-')))).toEqual({ ...a.breaks, ...b.breaks });
    expect((await externalBreaks(store)).map((e) => [e.sessionId, e.reason, e.callNumber, e.line, e.ts])).toEqual(
      log.breaks.map((x) => ['sess-claude', x.reason, x.callNumber, x.line, x.ts]),
    );
    expect(following.rejected).toEqual([]);
    // Qwen Code's llm_request spans repeat three calls of each copy's log records: those are the only duplicates.
    expect(following.tailer.totals()).toMatchObject({ duplicates: 3 * 4, rejected: 0, externalBreaks: 12 });
  });

  it('starts files that exist at start at their end, and reports a bad line by file and line without stopping', async () => {
    const dir = tempDir();
    const path = join(dir, 'events.ndjson');
    const before = turns('sess-old', 5);
    writeFileSync(path, before.text + '{"type": "turn", "requestId": "half-written'); // the writer is mid-line
    const store = freshStore();
    const following = await follow(store, [path]);
    const after = turns('sess-new', 10);
    const lines = after.text.split('\n');
    await startWriter().run({ op: 'append', path, data: `", "x": 1}\n${lines.slice(0, 4).join('\n')}\nnot json\n${lines.slice(4).join('\n')}`, maxChunk: 80 });
    await turnsStored(store, ['sess-new'], 10);
    expect(await turnStates(store, ['sess-old'])).toEqual({});
    await waitFor('the rejection', () => (following.rejected.length > 0 ? true : undefined));
    expect(following.rejected).toEqual([`${path}:11: not valid JSON (Unexpected token)`]);
  });

  it('reads a file in the format it is told, whatever its first line looks like', async () => {
    const dir = tempDir();
    const path = join(dir, 'events.ndjson');
    writeFileSync(path, turns('sess-forced', 6).text);
    const detected = freshStore();
    await (await follow(detected, [path], { fromStart: true })).tailer.settled();
    expect(Object.keys(await turnStates(detected, ['sess-forced']))).toHaveLength(6);
    // Read as a Claude Code debug log, the same lines are no [PROMPT CACHE BREAK] reports: ignored, nothing stored.
    const forced = freshStore();
    const following = await follow(forced, [path], { fromStart: true, format: 'claude-debug' });
    await following.tailer.settled();
    expect(await turnStates(forced, ['sess-forced'])).toEqual({});
    expect(following.tailer.totals()).toMatchObject({ units: 6, ignored: 6 });
  });

  it('gives up a line that never ends (64 MiB without a newline) and reads on after it', async () => {
    const dir = tempDir();
    const path = join(dir, 'events.ndjson');
    const before = turns('sess-before', 2);
    const after = turns('sess-after', 5);
    writeFileSync(path, Buffer.concat([Buffer.from(before.text), Buffer.alloc(65 * 2 ** 20, 'x'), Buffer.from(`\n${after.text}`)]));
    const store = freshStore();
    const following = await follow(store, [path], { fromStart: true });
    await turnsStored(store, ['sess-before', 'sess-after'], 7);
    expect(following.rejected).toEqual([`${path}:3: no end of line or object within 64 MiB; skipped to the next one`]);
  });
});

describe('rotation', () => {
  it('rename and re-create: the old file is read to its end (written on after the rename), the new one from its start', async () => {
    const dir = tempDir();
    const path = join(dir, 'app.ndjson');
    writeFileSync(path, '');
    const store = freshStore();
    const following = await follow(store, [path]);
    const first = turns('sess-r', 60);
    const lines = first.text.trimEnd().split('\n');
    const writer = startWriter();
    await writer.run(
      { op: 'open', path, handle: 'old' },
      { op: 'appendHandle', handle: 'old', data: lines.slice(0, 40).join('\n') + '\n', maxChunk: 120, delayMs: 1 },
      { op: 'rename', from: path, to: `${path}.1` },
      // The writer has not reopened yet: its last lines still go to the renamed file.
      { op: 'appendHandle', handle: 'old', data: lines.slice(40, 50).join('\n') + '\n', maxChunk: 120 },
      { op: 'close', handle: 'old' },
      { op: 'append', path, data: lines.slice(50).join('\n') + '\n', maxChunk: 120, delayMs: 1 },
    );
    const reference = await referenceStore({ ndjson: [first.text] });
    expect(await turnsStored(store, ['sess-r'], 60)).toEqual(await turnStates(reference, ['sess-r']));
    expect(await allBreaks(store)).toEqual(first.breaks);
    await waitFor('the old file closed', () => (following.tailer.totals().files === 2 && following.notices.some((n) => n.includes('no longer matched')) ? true : undefined));
    expect(following.tailer.totals()).toMatchObject({ files: 2, duplicates: 0 });
  });

  it('copytruncate: a file truncated in place is read again from its start', async () => {
    const dir = tempDir();
    const path = join(dir, 'app.ndjson');
    writeFileSync(path, '');
    const store = freshStore();
    const following = await follow(store, [path]);
    const before = turns('sess-c', 40);
    const after = turns('sess-d', 15);
    const writer = startWriter();
    await writer.run({ op: 'append', path, data: before.text, maxChunk: 200, delayMs: 1 });
    await turnsStored(store, ['sess-c'], 40);
    await writer.run({ op: 'copytruncate', path, to: `${path}.1` }, { op: 'append', path, data: after.text, maxChunk: 200, delayMs: 1 });
    await turnsStored(store, ['sess-d'], 15);
    expect(await turnStates(store, ['sess-c'])).toEqual(await turnStates(await referenceStore({ ndjson: [before.text] }), ['sess-c']));
    expect(await allBreaks(store)).toEqual({ ...before.breaks, ...after.breaks });
    expect(following.notices).toContain(`${path}: truncated; reading it again from the start`);
    expect(following.tailer.totals().duplicates).toBe(0);
  });
});

describe('links, globs and deletion', () => {
  it('a `latest` link that switches: the new target is read from its start, the old one to its end', async () => {
    const dir = tempDir();
    const debug = join(dir, 'debug');
    const writer = startWriter();
    await writer.run({ op: 'mkdir', path: debug }, { op: 'append', path: join(debug, 'sess-1.txt'), data: '' }, { op: 'symlink', target: join(debug, 'sess-1.txt'), path: join(debug, 'latest') });
    const store = freshStore();
    await follow(store, [join(debug, 'latest')]);
    const one = claudeDebugLog(6);
    const late = claudeDebugLog(2, { at: T0 + 3_600_000, firstCall: 50 });
    const two = claudeDebugLog(5, { at: T0 + 7_200_000 });
    await writer.run(
      { op: 'append', path: join(debug, 'sess-1.txt'), data: one.text, maxChunk: 50, delayMs: 1 },
      { op: 'append', path: join(debug, 'sess-2.txt'), data: '' },
      { op: 'symlink', target: join(debug, 'sess-2.txt'), path: join(debug, 'latest') },
      { op: 'append', path: join(debug, 'sess-1.txt'), data: late.text, maxChunk: 50 },
      { op: 'append', path: join(debug, 'sess-2.txt'), data: two.text, maxChunk: 50, delayMs: 1 },
    );
    const found = await waitFor('13 harness-reported breaks', async () => {
      const list = await externalBreaks(store);
      return list.length === 13 ? list : undefined;
    });
    const lateLines = one.text.split('\n').length - 1;
    expect(found.map((e) => [e.sessionId, e.callNumber, e.line])).toEqual([
      ...one.breaks.map((b) => ['sess-1', b.callNumber, b.line]),
      ...late.breaks.map((b) => ['sess-1', b.callNumber, b.line + lateLines]),
      ...two.breaks.map((b) => ['sess-2', b.callNumber, b.line]),
    ]);
    expect(found[0]).toMatchObject({ harness: 'claude-code', agentId: 'main', source: 'repl_main_thread', file: join(debug, 'sess-1.txt'), diffPath: '/tmp/claude-1000/cache-break-0.diff' });
  });

  it('files that appear later under a glob, in new directories too, are read from their start; others are not followed', async () => {
    const dir = tempDir();
    const store = freshStore();
    const following = await follow(store, [join(dir, '**', '*.ndjson')]);
    const top = turns('sess-top', 20);
    const deep = turns('sess-deep', 30);
    await startWriter().run(
      { op: 'append', path: join(dir, 'top.ndjson'), data: top.text, maxChunk: 300 },
      { op: 'mkdir', path: join(dir, 'a', 'b') },
      { op: 'append', path: join(dir, 'a', 'b', 'deep.ndjson'), data: deep.text, maxChunk: 300, delayMs: 1 },
      { op: 'append', path: join(dir, 'a', 'ignored.txt'), data: turns('sess-ignored', 5).text },
    );
    await turnsStored(store, ['sess-top', 'sess-deep'], 50);
    expect(await allBreaks(store)).toEqual({ ...top.breaks, ...deep.breaks });
    expect(await turnStates(store, ['sess-ignored'])).toEqual({});
    expect(following.tailer.totals().files).toBe(2);
  });

  it('a deleted file: what was written is kept, its checkpoint goes', async () => {
    const dir = tempDir();
    const path = join(dir, 'gone.ndjson');
    writeFileSync(path, '');
    const store = freshStore();
    const following = await follow(store, [path]);
    const written = turns('sess-gone', 25);
    const writer = startWriter();
    await writer.run({ op: 'append', path, data: written.text, maxChunk: 200 });
    await turnsStored(store, ['sess-gone'], 25);
    await waitFor('the checkpoint', async () => ((await store.tailCheckpoints('default')).length === 1 ? true : undefined));
    await writer.run({ op: 'unlink', path });
    await waitFor('the checkpoint forgotten', async () => ((await store.tailCheckpoints('default')).length === 0 ? true : undefined));
    expect(Object.keys(await turnStates(store, ['sess-gone']))).toEqual(written.requestIds);
    expect(following.tailer.totals().files).toBe(1);
  });
});
