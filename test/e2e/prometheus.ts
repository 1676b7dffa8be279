// A real Prometheus (Debian's `prometheus`, which .ci/run installs) for the
// tests, in a temporary directory, killed after the file's tests.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';

export type Json = Record<string, any>;

async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, 'close');
  return port;
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `check` every 250 ms until it returns a value, for at most `ms`. */
export async function until<T>(what: string, ms: number, check: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    const value = await check().catch(() => undefined);
    if (value !== undefined) return value;
    await sleep(250);
  }
  throw new Error(`${what}: not within ${ms} ms`);
}

const children: ChildProcess[] = [];
const dirs: string[] = [];
afterAll(async () => {
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await once(child, 'exit');
    }
  }
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A scrape of `target` every second, with no authorization. */
export function scrapeConfig(target: string): string {
  return ['global:', '  scrape_interval: 1s', '  evaluation_interval: 1s', 'scrape_configs:', '  - job_name: cachebreak', '    static_configs:', `      - targets: ['${target}']`, ''].join('\n');
}

/** Starts a Prometheus with this configuration (YAML text); answers its URL once ready. */
export async function startPrometheus(configText: string): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'cachebreak-prometheus-'));
  dirs.push(dir);
  const config = join(dir, 'prometheus.yml');
  writeFileSync(config, configText);
  const port = await freePort();
  const child = spawn(
    'prometheus',
    [`--config.file=${config}`, `--storage.tsdb.path=${join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`, '--log.level=warn'],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  children.push(child);
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const spawned = await Promise.race([once(child, 'spawn').then(() => undefined), once(child, 'error').then(([error]) => error as NodeJS.ErrnoException)]);
  if (spawned) {
    throw new Error(
      spawned.code === 'ENOENT'
        ? 'prometheus is not installed: `apt-get install prometheus` (Debian/Ubuntu; .ci/run does this in CI)'
        : `prometheus did not start: ${spawned.message}`,
    );
  }
  const url = `http://127.0.0.1:${port}`;
  await until(`prometheus ready (${stderr.slice(-500)})`, 20_000, async () => ((await fetch(`${url}/-/ready`)).ok ? true : undefined));
  return url;
}

export async function query(prometheus: string, expr: string): Promise<Json> {
  const response = await fetch(`${prometheus}/api/v1/query?${new URLSearchParams({ query: expr })}`);
  return (await response.json()) as Json;
}

