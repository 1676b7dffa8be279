// The published package: `npm pack` of this checkout's build, installed
// globally into a temporary prefix, and `cachebreak serve` run from a folder
// that is not the checkout. The migrations (and the dashboards shipped
// beside them) must be found relative to the installed package, never the
// working directory.
//
// Install scripts are skipped (--ignore-scripts): better-sqlite3's would
// compile SQLite, minutes of CPU. Its addon is copied instead from this
// checkout's node_modules, where the same version was built for this node.
// Dependencies come from npm's cache when they are there (--prefer-offline),
// else from the registry. The library exports, cachebreak/detector and
// cachebreak/client, are imported by name from the installed package.
import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers.js';
import { seedSession } from './events.js';
import { breaksOf } from './api.js';
import { postEvents, request, startServer } from './server.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const run = promisify(execFile);

/** The environment without npm's own settings (npm test sets npm_config_*), which would redirect the install. */
function npmEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^npm_/i.test(key) && !key.startsWith('CACHEBREAK_')));
}

async function npm(args: string[], cwd: string, timeout: number): Promise<string> {
  try {
    return (await run('npm', args, { cwd, env: npmEnv(), timeout, maxBuffer: 16 * 1024 * 1024 })).stdout;
  } catch (error) {
    const { stderr, message } = error as { stderr?: string; message: string };
    throw new Error(`npm ${args.join(' ')} failed (the install needs npm's cache or the registry): ${message}\n${stderr ?? ''}`);
  }
}

describe('the npm package', () => {
  it('packs what serve needs, installs globally, and serves from any folder', { timeout: 300_000 }, async () => {
    if (!existsSync(join(ROOT, 'dist/cli.js'))) throw new Error('dist/cli.js is missing: run "npm run build" first (npm test does)');
    const dir = tempDir();
    const [packed] = JSON.parse(await npm(['pack', '--ignore-scripts', '--json', '--pack-destination', dir], ROOT, 60_000)) as { filename: string; files: { path: string }[] }[];
    const files = packed!.files.map((f) => f.path);
    const library = ['dist/detector/index.js', 'dist/detector/index.d.ts', 'dist/client/index.js', 'dist/client/index.d.ts'];
    for (const needed of ['dist/cli.js', 'dist/server.js', 'dist/serve/readers/worker.js', 'migrations/meta/_journal.json', 'LICENSE', 'README.md', 'package.json', ...library]) {
      expect(files, needed).toContain(needed);
    }
    const journal = JSON.parse(readFileSync(join(ROOT, 'migrations/meta/_journal.json'), 'utf8')) as { entries: { tag: string }[] };
    for (const { tag } of journal.entries) expect(files).toContain(`migrations/${tag}.sql`);
    for (const dashboard of ['overview', 'breaks', 'session', 'prometheus']) expect(files).toContain(`dashboards/cachebreak-${dashboard}.json`);
    expect(files).toContain('dashboards/provisioning/datasources/cachebreak.yaml');
    expect(files).toContain('dashboards/provisioning/dashboards/cachebreak.yaml');
    // Sources and tests stay out.
    expect(files.filter((f) => /^(src|test|dashboards\/src)\//.test(f))).toEqual([]);

    const prefix = join(dir, 'prefix');
    await npm(['install', '--global', '--prefix', prefix, '--ignore-scripts', '--prefer-offline', '--no-audit', '--no-fund', join(dir, packed!.filename)], dir, 240_000);
    const installed = join(prefix, 'lib/node_modules/cachebreak');
    const require = createRequire(join(ROOT, 'package.json'));
    const built = dirname(require.resolve('better-sqlite3/package.json'));
    const target = join(installed, 'node_modules/better-sqlite3');
    const version = (path: string) => (JSON.parse(readFileSync(join(path, 'package.json'), 'utf8')) as { version: string }).version;
    expect(version(target)).toBe(version(built));
    mkdirSync(join(target, 'build/Release'), { recursive: true });
    copyFileSync(join(built, 'build/Release/better_sqlite3.node'), join(target, 'build/Release/better_sqlite3.node'));

    const bin = join(prefix, 'bin/cachebreak');
    expect(realpathSync(bin)).toBe(join(realpathSync(installed), 'dist/cli.js'));
    // A folder with no migrations/ or dashboards/ in it or above it.
    const elsewhere = tempDir();
    const server = await startServer({ db: join(elsewhere, 'x.db'), executable: { path: bin, cwd: elsewhere } });
    expect((await postEvents(server.url, seedSession())).body).toEqual({ accepted: 8, duplicates: 0, rejected: [] });
    expect((await breaksOf(server.url)).map((b) => b.reason)).toEqual(['tools_order_changed']);
    expect((await request(server.url, '/metrics')).text).toContain('cachebreak_breaks_total{project="default"');

    // A harness beside the installed package imports the library by name, judges a break, and sends it.
    const harness = join(prefix, 'lib', 'harness.mjs');
    writeFileSync(
      harness,
      `import { completedEvent, Detector, snapshotFromRequest, usageFromResponse } from 'cachebreak/detector';
import { CachebreakClient } from 'cachebreak/client';
const detector = new Detector();
const client = new CachebreakClient({ url: process.argv[2] });
const body = (tools) => ({ model: 'claude-sonnet-4-5', tools: tools.map((name) => ({ name, input_schema: { type: 'object' } })), messages: [] });
const usage = (read, write) => usageFromResponse('anthropic', { usage: { input_tokens: 5, cache_read_input_tokens: read, cache_creation_input_tokens: write } });
for (const [i, [tools, read, write]] of [[['a', 'b'], 0, 30000], [['b', 'a'], 0, 30000]].entries()) {
  const turn = { requestId: 'pkg' + i, sessionId: 'sess_pkg', ts: Date.parse('2026-11-30T10:00:00Z') + i * 10000, provider: 'anthropic', snapshot: snapshotFromRequest('anthropic', body(tools)), usage: usage(read, write) };
  console.log(detector.observe(turn).state);
  client.send(completedEvent(turn));
}
await client.shutdown();
console.log(client.stats.accepted);
`,
    );
    const { stdout } = await run(process.execPath, [harness, server.url], { cwd: elsewhere, timeout: 30_000 });
    expect(stdout).toBe('cold\nmiss\n2\n');
    const reasons = (await breaksOf(server.url)).filter((b) => b.sessionId === 'sess_pkg').map((b) => b.reason);
    expect(reasons).toEqual(['tools_order_changed']);
  });
});
