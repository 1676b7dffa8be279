// A database the server cannot write: it refuses to start, with exit code 1
// and a message that names the file and what to do, instead of answering
// /readyz 200 and then 503 to every write (a read-only file), or crashing with
// a raw SqliteError and its stack (a new file in a read-only directory).
//
// Read-only as root needs the immutable attribute (chattr +i): root writes
// through any permission bits. As another user, chmod does it. Where neither
// is possible (root on a file system without the attribute) the tests fail at
// makeReadOnly, saying so.
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CLI } from './process.js';
import { tempDir } from '../helpers.js';

const isRoot = process.getuid?.() === 0;
const undo: (() => void)[] = [];

afterEach(() => {
  for (const step of undo.splice(0).reverse()) step();
});

/** Makes a file or directory read-only for this process; false when that is not possible here. */
function makeReadOnly(path: string): boolean {
  if (!isRoot) {
    chmodSync(path, 0o555);
    undo.push(() => chmodSync(path, 0o755));
    return true;
  }
  try {
    execFileSync('chattr', ['+i', path], { stdio: 'pipe' });
  } catch {
    return false;
  }
  undo.push(() => execFileSync('chattr', ['-i', path], { stdio: 'pipe' }));
  return true;
}

function cachebreak(args: string[]) {
  const run = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 8_000, env: { PATH: process.env.PATH ?? '' } });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

const serve = (db: string) => cachebreak(['serve', '--host', '127.0.0.1', '--port', '0', '--grpc-port', 'off', '--db', db]);

describe('a database the server cannot write', () => {
  it('an existing read-only file: exit 1 before listening, naming the file and what to do', () => {
    const db = join(tempDir(), 'ro.db');
    expect(cachebreak(['keys', 'list', '--db', db]).status).toBe(0); // created, migrated and closed
    expect(makeReadOnly(db)).toBe(true);
    const run = serve(db);
    expect(run.status).toBe(1);
    expect(run.stdout).not.toContain('listening');
    expect(run.stderr).toContain(`cachebreak serve: the database ${db} is read-only for this process`);
    expect(run.stderr).toContain('writable by this user');
    expect(run.stderr).not.toMatch(/SqliteError|\n\s+at /);
    // Reading it still works: keys list needs no write.
    expect(cachebreak(['keys', 'list', '--db', db]).status).toBe(0);
    const create = cachebreak(['keys', 'create', '--db', db, '--project', 'p', '--scope', 'read']);
    expect(create.status).toBe(1);
    expect(create.stdout).toBe('');
    expect(create.stderr).toContain('is read-only for this process');
  });

  it('a new file in a read-only directory: exit 1 with what to do, no stack', () => {
    const dir = join(tempDir(), 'ro');
    mkdirSync(dir);
    expect(makeReadOnly(dir)).toBe(true);
    const run = serve(join(dir, 'new.db'));
    expect(run.status).toBe(1);
    expect(run.stderr).toContain(`cachebreak serve: cannot open or create the database ${join(dir, 'new.db')}`);
    expect(run.stderr).toContain('its directory must exist and be writable');
    expect(run.stderr).not.toMatch(/SqliteError|\n\s+at /);
  });
});
