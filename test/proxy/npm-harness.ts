// A real coding harness, installed from the npm registry at run time into a
// cache under the system's temp directory (reused while it is complete), never
// into the project's node_modules. Install scripts do not run. Without the
// registry the install fails, and so does the test, saying so.
import { execFile, spawn } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const INSTALL_TIMEOUT_MS = 180_000;
/** Written once npm has finished: a directory without it is an interrupted install. */
const COMPLETE = '.cachebreak-installed';

export interface NpmHarness {
  /** `<package>@<version>`, as installed. */
  spec: string;
  dir: string;
  /** Runs the harness's entry point with node and these arguments, bounded. */
  run(args: readonly string[], options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number }): Promise<HarnessRun>;
}

export interface HarnessRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

function npmInstall(dir: string, spec: string): Promise<void> {
  const args = ['install', '--prefix', dir, '--no-save', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel', 'error', spec];
  return new Promise((resolve, reject) => {
    execFile('npm', args, { timeout: INSTALL_TIMEOUT_MS, killSignal: 'SIGKILL', maxBuffer: 16 * 1024 * 1024 }, (error, _stdout, stderr) => {
      if (!error) return resolve();
      const why = error.killed ? `no result within ${INSTALL_TIMEOUT_MS / 1000} s` : error.message.split('\n')[0];
      reject(new Error(`installing ${spec} from the npm registry failed (${why}). This test runs the real harness and needs the registry reachable (npm config get registry). npm said:\n${stderr.slice(-2000)}`));
    });
  });
}

/** `entry` is the harness's launcher, relative to node_modules: a script node runs. */
export async function installHarness(name: string, version: string, entry: string): Promise<NpmHarness> {
  const spec = `${name}@${version}`;
  const dir = join(tmpdir(), 'cachebreak-harness-cache', spec.replace(/^@[^/]+\//, '').replace(/\//g, '+'));
  if (!existsSync(join(dir, COMPLETE))) {
    await npmInstall(dir, spec);
    writeFileSync(join(dir, COMPLETE), `${spec}\n`);
  }
  const script = join(dir, 'node_modules', entry);
  if (!existsSync(script)) throw new Error(`${spec} is installed in ${dir} but has no ${entry}: remove the directory to install it again`);
  return {
    spec,
    dir,
    run: (args, { cwd, env, timeoutMs }) =>
      new Promise((resolve, reject) => {
        const child = spawn(process.execPath, [script, ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (part: Buffer) => (stdout += part.toString()));
        child.stderr.on('data', (part: Buffer) => (stderr += part.toString()));
        const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
        child.on('error', reject);
        child.on('close', (code, signal) => {
          clearTimeout(timer);
          resolve({ code, signal, stdout, stderr });
        });
      }),
  };
}

/** Orders a harness's rows (breaks, turns) by agent id, so that its agents (main, router, memory…) compare in a fixed order. */
export function byAgent(x: { agentId: unknown }, y: { agentId: unknown }): number {
  const [a, b] = [String(x.agentId), String(y.agentId)];
  return a < b ? -1 : a > b ? 1 : 0;
}
