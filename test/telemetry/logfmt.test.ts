// Log lines carry values clients chose (session ids, models, file paths): a
// value with terminal escapes must reach the log escaped, never raw, so that
// reading the log cannot recolour, clear or rewrite the terminal, and a value
// cannot forge a second line. The same holds for the text `report` prints.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { logfmt, printable } from '../../src/telemetry/logfmt.js';
import { cli } from '../cli/run.js';
import { tempDir } from '../helpers.js';
import { toWire, tools, turn, usage, MINUTE, SEED_TOOLS } from '../core/scenario.js';
import { testApp } from '../serve/harness.js';

/** What a terminal or log viewer would act on. */
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/u;

/** logfmt value → text, as a reader of the log gets it back. */
function valueOf(line: string, key: string): string {
  const raw = new RegExp(`(?:^| )${key}=("(?:[^"\\\\]|\\\\.)*"|\\S*)`).exec(line)![1]!;
  return raw.startsWith('"') ? (JSON.parse(raw) as string) : raw;
}

describe('logfmt', () => {
  it('escapes control characters in values, and the escaped value reads back as sent', () => {
    const hostile = {
      ansi: 'y\x1b[31mRED',
      c1: 'csi\u009b2J',
      del: 'a\u007fb',
      newline: 'a\nlevel=error event=forged',
      separator: 'a\u2028b',
      bidi: 'evil\u202etxt.exe',
      bell: '\u0007',
    };
    const line = logfmt(hostile);
    expect(line).not.toMatch(CONTROL);
    expect(line).not.toContain('\n');
    expect(line).toContain('ansi="y\\u001b[31mRED"');
    for (const [key, value] of Object.entries(hostile)) expect(valueOf(line, key)).toBe(value);
    // Plain values stay bare.
    expect(logfmt({ session: 'sess_A', n: 3 })).toBe('session=sess_A n=3');
  });

  it('printable() escapes the same characters for plain text', () => {
    expect(printable('file\x1b]0;title\x07.log')).toBe('file\\u001b]0;title\\u0007.log');
    expect(printable('ok: überall')).toBe('ok: überall');
  });

  it('a break of a session whose id carries an escape sequence is logged escaped', async () => {
    const { post, logLines } = testApp();
    const sessionId = 'y\x1b[31mRED';
    const events = [
      turn('r1', { sessionId, usage: usage(0, 48_900) }),
      turn('r2', { sessionId, at: MINUTE, tools: tools([...SEED_TOOLS].reverse()), usage: usage(0, 48_900) }),
    ];
    expect((await post({ events: events.map(toWire) })).status).toBe(200);
    const breaks = logLines.filter((l) => l.includes('event=prompt_cache_break'));
    expect(breaks).toHaveLength(1);
    expect(breaks[0]).not.toMatch(CONTROL);
    expect(valueOf(breaks[0]!, 'session')).toBe(sessionId);
  });
});

describe('cachebreak report', () => {
  it('prints session ids and tool names with their escape sequences escaped', async () => {
    const dir = tempDir();
    const sessionId = 'y\x1b[31mRED';
    const events = [
      turn('r1', { sessionId, usage: usage(0, 48_900) }),
      turn('r2', { sessionId, at: MINUTE, tools: tools(['x\x1b]0;owned\x07', ...SEED_TOOLS]), usage: usage(0, 48_900) }),
    ];
    writeFileSync(join(dir, 'e.ndjson'), events.map((e) => JSON.stringify(toWire(e))).join('\n') + '\n');
    const db = join(dir, 'r.db');
    expect((await cli(['import', '--db', db, join(dir, 'e.ndjson')])).code).toBe(0);
    const report = await cli(['report', '--db', db]);
    expect(report.code).toBe(0);
    expect(report.stdout).toContain('y\\u001b[31mRED');
    expect(report.stdout).toContain('x\\u001b]0;owned\\u0007');
    expect(report.stdout).not.toMatch(CONTROL);
  });
});
