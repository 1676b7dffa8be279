// What someone who can write a followed directory could plant there: a FIFO
// (a read that never ends), a device, a link to a file elsewhere (the tail
// would read, and report lines of, any file this user can read), a file name
// with terminal escapes, lines full of secrets. Only regular files inside the
// watched directories are read; the rest is skipped with one notice each;
// rejected lines say what is wrong and where, never what the line said.
import { execFileSync } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { printable } from '../../src/telemetry/logfmt.js';
import { freshStore, tempDir } from '../helpers.js';
import { cli } from '../cli/run.js';
import { follow, turnStates, waitFor } from './harness.js';
import { turns } from './workload.js';

const SECRET = 'sk-live-SECRET-1234567890';

function mkfifo(path: string): boolean {
  try {
    execFileSync('mkfifo', [path], { stdio: 'pipe' });
    return true;
  } catch {
    return false;
  }
}

describe('what a followed directory may hold', () => {
  it('reads regular files inside it; skips a FIFO, a device and links leading outside, each with one notice', async () => {
    const root = tempDir();
    const watched = join(root, 'watched');
    const elsewhere = join(root, 'elsewhere');
    mkdirSync(watched);
    mkdirSync(elsewhere);
    writeFileSync(join(watched, 'good.ndjson'), turns('good', 3).text);
    // A file outside, with events: following the link would store them.
    writeFileSync(join(elsewhere, 'private.ndjson'), turns('private', 3).text);
    symlinkSync(join(elsewhere, 'private.ndjson'), join(watched, 'outside.ndjson'));
    // A link that stays inside is fine (Claude Code's `latest`).
    symlinkSync(join(watched, 'good.ndjson'), join(watched, 'latest.ndjson'));
    symlinkSync('/dev/zero', join(watched, 'zero.ndjson'));
    const fifo = mkfifo(join(watched, 'pipe.ndjson'));

    const store = freshStore();
    const following = await follow(store, [join(watched, '*.ndjson')], { fromStart: true });
    await waitFor('the good file', async () => (Object.keys(await turnStates(store, ['good'])).length === 3 ? true : undefined));
    // A few polls more: every skip is reported once, not once per poll.
    await new Promise((resolve) => setTimeout(resolve, 700));
    await following.tailer.settled();

    expect(await turnStates(store, ['private'])).toEqual({});
    const notices = following.notices.filter((n) => !n.includes('good.ndjson'));
    expect(notices).toContain(`${join(watched, 'outside.ndjson')}: a link to ${join(elsewhere, 'private.ndjson')}, outside the watched directories; skipped (--follow-symlinks follows it)`);
    expect(notices).toContain(`${join(watched, 'zero.ndjson')}: a link to /dev/zero, outside the watched directories; skipped (--follow-symlinks follows it)`);
    if (fifo) expect(notices).toContain(`${join(watched, 'pipe.ndjson')}: a FIFO (named pipe), not a regular file; skipped`);
    expect(notices).toHaveLength(fifo ? 3 : 2);
    expect(following.tailer.totals().files).toBe(1);
  });

  it('follows a link outside with --follow-symlinks, and still never a device', async () => {
    const root = tempDir();
    const watched = join(root, 'watched');
    mkdirSync(watched);
    writeFileSync(join(root, 'private.ndjson'), turns('linked', 3).text);
    symlinkSync(join(root, 'private.ndjson'), join(watched, 'outside.ndjson'));
    symlinkSync('/dev/zero', join(watched, 'zero.ndjson'));
    const store = freshStore();
    const following = await follow(store, [join(watched, '*.ndjson')], { fromStart: true, followSymlinks: true });
    await waitFor('the linked file', async () => (Object.keys(await turnStates(store, ['linked'])).length === 3 ? true : undefined));
    expect(following.notices).toContain(`${join(watched, 'zero.ndjson')}: a character device, not a regular file; skipped`);
  });

  it('reports rejected lines by file and line, without quoting them', async () => {
    const dir = tempDir();
    const file = join(dir, 'events.ndjson');
    const lines = [
      `${SECRET} is not json`,
      `\u001b]0;owned\u0007 nor this`,
      JSON.stringify({ type: SECRET, sessionId: 's', requestId: 'r', ts: 1 }),
      JSON.stringify({ type: `x\u001b[2J${SECRET}`, sessionId: 's', requestId: 'r', ts: 1 }),
    ];
    writeFileSync(file, lines.join('\n') + '\n');
    const store = freshStore();
    const following = await follow(store, [file], { fromStart: true, format: 'ndjson' });
    await waitFor('4 rejections', () => (following.rejected.length === 4 ? true : undefined));
    for (const line of following.rejected) {
      expect(line).not.toContain('SECRET');
      expect(line).not.toContain('owned');
      expect(line).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/);
    }
    expect(following.rejected[0]).toBe(`${file}:1: not valid JSON (Unexpected token)`);
    expect(following.rejected[2]).toBe(`${file}:3: type: expected one of snapshot, usage, turn, got another value`);
  });

  it('cachebreak tail prints file names with escape sequences escaped', async () => {
    const dir = tempDir();
    const name = join(dir, 'x\u001b[31mred.ndjson');
    writeFileSync(name, 'not json\n');
    const stop = new AbortController();
    const run = cli(['tail', '--db', join(dir, 'a.db'), '--from-start', '--format', 'ndjson', join(dir, '*.ndjson')], { signal: stop.signal });
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    stop.abort();
    const result = await run;
    expect(result.code).toBe(0);
    expect(result.stderr).toContain(`${printable(name)}:1: not valid JSON`);
    expect(result.stderr).not.toContain('\u001b');
  });
});
