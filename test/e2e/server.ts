// End-to-end harness: a real `cachebreak serve` process per call, on a
// database in a temporary directory, always killed after its test (or, when
// a file's tests share it, after the last of them). Assumes `npm run build`
// has run (npm test builds before vitest).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach } from 'vitest';
import { tempDir } from '../helpers.js';
import { spawnServer, type Executable, type ServerProcess } from './process.js';

export type { Exit, Reply, ServerProcess } from './process.js';
export { getJson, postEvents, request } from './process.js';

/** Servers of the running test, and servers shared by the tests of a file. */
const running = { test: new Set<ServerProcess>(), file: new Set<ServerProcess>() };

async function killAll(set: Set<ServerProcess>): Promise<void> {
  const children = [...set];
  set.clear();
  await Promise.all(children.map((child) => child.kill9()));
}

// Registered after helpers.ts's own afterEach (imported above), so with
// vitest's stacked hooks it runs first: children die before their
// directories are removed.
afterEach(() => killAll(running.test));
const fileDirs: string[] = [];
afterAll(async () => {
  await killAll(running.file);
  for (const dir of fileDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

export interface StartOptions {
  /** An existing database file (restarts); default: a new file in a new temp dir. */
  db?: string;
  /** Extra `serve` flags, e.g. ['--body-limit', '64KiB']. */
  args?: readonly string[];
  /** Flags for node itself, e.g. ['--max-old-space-size=128']. */
  nodeArgs?: readonly string[];
  /** An installed `cachebreak` to run instead of this checkout's dist/cli.js. */
  executable?: Executable;
  /**
   * 'test' (default): killed after the test. 'file': shared by a file's
   * tests (started in beforeAll), killed after the last of them, with its
   * default database in a directory of its own (helpers.ts's tempDir() is
   * removed after every test).
   */
  lifetime?: 'test' | 'file';
  /** 'serve' (default), or 'proxy': the server with the provider proxy on a free port. */
  command?: 'serve' | 'proxy';
}

export async function startServer(options: StartOptions = {}): Promise<ServerProcess> {
  const lifetime = options.lifetime ?? 'test';
  let db = options.db;
  if (db === undefined && lifetime === 'file') {
    const dir = mkdtempSync(join(tmpdir(), 'cachebreak-e2e-'));
    fileDirs.push(dir);
    db = join(dir, 'x.db');
  }
  db ??= join(tempDir(), 'x.db');
  const server = await spawnServer(db, options.args, options.nodeArgs, options.command, options.executable);
  const set = running[lifetime];
  set.add(server);
  void server.exited.then(() => set.delete(server));
  return server;
}
