// --db naming a file that is not a SQLite database (a log, a config file, a
// typo'd path to something else): every command that opens it says so in
// one line, the file and what to do, with no stack trace, exits non-zero,
// and leaves the file as it was.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers.js';
import { cli } from './run.js';

describe('--db on a file that is not a SQLite database', () => {
  const commands: [string, (db: string, dir: string) => string[]][] = [
    ['serve', (db) => ['serve', '--host', '127.0.0.1', '--port', '0', '--grpc-port', 'off', '--db', db]],
    ['import', (db, dir) => ['import', join(dir, 'events.jsonl'), '--db', db]],
    ['keys', (db) => ['keys', 'list', '--db', db]],
    ['reevaluate', (db) => ['reevaluate', '--db', db]],
    ['report', (db) => ['report', '--db', db]],
    ['demo', (db) => ['demo', '--db', db]],
    ['tail', (db, dir) => ['tail', '--db', db, join(dir, 'events.jsonl')]],
  ];
  for (const [name, args] of commands) {
    it(`${name}: one line naming the file and what to do, a non-zero exit code, the file untouched`, async () => {
      const dir = tempDir();
      const db = join(dir, 'notes.txt');
      const text = 'not a database\n'.repeat(500);
      writeFileSync(db, text);
      writeFileSync(join(dir, 'events.jsonl'), '');
      const run = await cli(args(db, dir));
      expect(run.code).toBeGreaterThan(0);
      // One line (some commands say first what they were doing), no stack trace.
      expect(run.stderr.trimEnd().split('\n')).toHaveLength(1);
      expect(run.stderr).toMatch(new RegExp(`^cachebreak ${name}: .*${db.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
      expect(run.stderr).toMatch(/is not a (SQLite|cachebreak) database/);
      expect(run.stderr).toContain('Point --db at a cachebreak database, or at a file name that does not exist yet to create one');
      expect(readFileSync(db, 'utf8')).toBe(text);
    });
  }
});
