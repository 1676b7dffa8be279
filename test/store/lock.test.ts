// The database lock in-process: a lock file naming this very process is
// stale (a container restarted on its volume gets the same pid, often 1),
// so it is taken over; one naming another live process is refused.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { lockDatabase } from '../../src/store/lock.js';
import { tempDir } from '../helpers.js';

describe('lockDatabase', () => {
  it('takes over a lock that names its own pid, as after a container restart', () => {
    const db = join(tempDir(), 'x.db');
    writeFileSync(`${db}.lock`, `${process.pid}\n`);
    const lock = lockDatabase(db);
    expect(readFileSync(`${db}.lock`, 'utf8')).toBe(`${process.pid}\n`);
    lock!.release();
    expect(existsSync(`${db}.lock`)).toBe(false);
  });

  it('refuses a lock held by another live process', () => {
    const db = join(tempDir(), 'x.db');
    const other = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30000)'], { stdio: 'ignore' });
    try {
      writeFileSync(`${db}.lock`, `${other.pid}\n`);
      expect(() => lockDatabase(db)).toThrow(`in use by another cachebreak server (pid ${other.pid}`);
    } finally {
      other.kill();
    }
  });
});
