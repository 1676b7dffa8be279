// Shared test plumbing: a fresh SQLite file per test, removed afterwards.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import { SERVICE_DETECTION } from '../src/prices/index.js';
import { SqliteStore } from '../src/store/sqlite/store.js';

const directories: string[] = [];
const stores: SqliteStore[] = [];

afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
  for (const dir of directories.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A new empty directory, deleted after the test. */
export function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'cachebreak-test-'));
  directories.push(dir);
  return dir;
}

/** A store on a new SQLite file, closed after the test. */
export function freshStore(): SqliteStore {
  const store = new SqliteStore(join(tempDir(), 'cachebreak.db'), SERVICE_DETECTION);
  stores.push(store);
  return store;
}
