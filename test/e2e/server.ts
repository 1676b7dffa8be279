// End-to-end harness: a real `cachebreak serve` process per call, on a fresh
// database of the kind under test (a SQLite file, or a PostgreSQL database:
// ../store-under-test.ts), always killed after its test (or, when a file's
// tests share it, after the last of them). Assumes `npm run build` has run
// (npm test builds before vitest).
import { afterAll, afterEach } from 'vitest';
import { freshDb, serveArgs } from '../store-under-test.js';
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

// Registered after store-under-test.ts's hooks (imported above), so with
// vitest's stacked hooks these run first: children die before their
// databases are removed.
afterEach(() => killAll(running.test));
afterAll(() => killAll(running.file));

export interface StartOptions {
  /** An existing database (restarts: `server.db`); default: a fresh one of the kind under test (freshDb). */
  db?: string;
  /** Extra `serve` flags, e.g. ['--body-limit', '64KiB']. */
  args?: readonly string[];
  /** Flags for node itself, e.g. ['--max-old-space-size=128']. */
  nodeArgs?: readonly string[];
  /** An installed `cachebreak` to run instead of this checkout's dist/cli.js. */
  executable?: Executable;
  /**
   * 'test' (default): killed after the test. 'file': shared by a file's
   * tests (started in beforeAll), killed after the last of them, its default
   * database removed then too.
   */
  lifetime?: 'test' | 'file';
  /** 'serve' (default), or 'proxy': the server with the provider proxy on a free port. */
  command?: 'serve' | 'proxy';
}

export async function startServer(options: StartOptions = {}): Promise<ServerProcess> {
  const lifetime = options.lifetime ?? 'test';
  const db = options.db ?? (await freshDb('x', lifetime));
  const args = options.args?.includes('--pg-pool') ? options.args : [...serveArgs(db), ...(options.args ?? [])];
  const server = await spawnServer(db, args, options.nodeArgs, options.command, options.executable);
  const set = running[lifetime];
  set.add(server);
  void server.exited.then(() => set.delete(server));
  return server;
}
