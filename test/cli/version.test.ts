// `cachebreak --version`: the built executable prints the version of its package.json.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CLI } from '../e2e/process.js';

const PACKAGE_VERSION = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

describe('cachebreak --version', () => {
  it.each([['--version'], ['-v'], ['version']])('%s prints "cachebreak <package.json version>" and exits 0', (flag) => {
    const run = spawnSync(process.execPath, [CLI, flag], { encoding: 'utf8', timeout: 15_000 });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(run.stdout).toBe(`cachebreak ${PACKAGE_VERSION}\n`);
  });
});
