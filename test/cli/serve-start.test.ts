// `cachebreak serve` as a real process, where starting goes wrong: a busy
// port, a missing folder, a database another process holds. Each is one
// line on stderr saying what and what to do, never a Node stack trace; a
// busy gRPC port leaves the server running on HTTP.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterEach, describe, expect, it } from 'vitest';
import { CLI } from '../e2e/process.js';
import { postEvents, startServer } from '../e2e/server.js';
import { tempDir } from '../helpers.js';

interface Finished {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `cachebreak serve ARGS` (or `proxy`) to its exit (bounded): for starts that must fail. */
function serveToExit(args: readonly string[], timeoutMs = 20_000, command: 'serve' | 'proxy' = 'serve'): Promise<Finished> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, command, '--host', '127.0.0.1', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`serve did not exit within ${timeoutMs} ms; stdout: ${stdout}; stderr: ${stderr}`));
    }, timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** stderr without the open-access notice every keyless loopback server logs. */
function problems(stderr: string): string[] {
  return stderr.split('\n').filter((line) => line !== '' && !line.includes('event=open_access'));
}

const listeners: Server[] = [];
afterEach(async () => {
  await Promise.all(listeners.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

/** A port taken by another program, as a Collector or Jaeger takes 4317. */
async function busyPort(): Promise<number> {
  const server = createServer();
  listeners.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as { port: number }).port;
}

describe('serve: failures to start are one line, exit 1', () => {
  it('names the busy HTTP port and the option that changes it', async () => {
    const port = await busyPort();
    const run = await serveToExit(['--port', String(port), '--grpc-port', 'off', '--db', join(tempDir(), 'a.db')]);
    expect(run.code).toBe(1);
    expect(problems(run.stderr)).toEqual([`cachebreak serve: cannot serve HTTP on 127.0.0.1:${port}: the port is already in use by another program; choose another --port (CACHEBREAK_PORT)`]);
  });

  it('says which folder of --db is missing and how to create it', async () => {
    const folder = join(tempDir(), 'no', 'such');
    const run = await serveToExit(['--port', '0', '--grpc-port', 'off', '--db', join(folder, 'a.db')]);
    expect(run.code).toBe(1);
    expect(problems(run.stderr)).toEqual([
      `cachebreak serve: cannot create the database ${join(folder, 'a.db')}: the folder ${folder} does not exist. Create it (mkdir -p ${folder}) or point --db at a file in an existing folder`,
    ]);
    expect(existsSync(folder)).toBe(false);
  });

  it('says the database is locked when another process holds it in a transaction', async () => {
    const db = join(tempDir(), 'held.db');
    // Another program holds an exclusive transaction on a file in rollback-journal mode.
    const holder = spawn(
      process.execPath,
      ['-e', `const D=require('better-sqlite3');const d=new D(process.argv[1]);d.exec('BEGIN EXCLUSIVE; CREATE TABLE t(x)');console.log('held');setInterval(()=>{},1000)`, db],
      { stdio: ['ignore', 'pipe', 'inherit'], cwd: process.cwd() },
    );
    try {
      await new Promise<void>((resolve) => createInterface({ input: holder.stdout! }).once('line', () => resolve()));
      const run = await serveToExit(['--port', '0', '--grpc-port', 'off', '--db', db]);
      expect(run.code).toBe(1);
      const lines = problems(run.stderr);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(new RegExp(`^cachebreak serve: the database ${db.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is locked by another process \\(.+\\): stop the process that holds it`));
    } finally {
      holder.kill('SIGKILL');
    }
  });

  it('refuses a second server on the same database, naming the first one\'s pid and the lock file', async () => {
    const first = await startServer({ args: ['--grpc-port', 'off'] });
    const run = await serveToExit(['--port', '0', '--grpc-port', 'off', '--db', first.db]);
    expect(run.code).toBe(1);
    expect(problems(run.stderr)).toEqual([
      `cachebreak serve: the database ${first.db} is in use by another cachebreak server (pid ${first.pid}, see ${first.db}.lock): ` +
        'stop that server, send to it instead (cachebreak import --server), or point --db at another file',
    ]);
    // The first server is untouched and still writes.
    expect((await postEvents(first.url, [])).status).toBe(200);
    // Once it stops, the file is free again.
    expect((await first.stop()).code).toBe(0);
    expect(existsSync(`${first.db}.lock`)).toBe(false);
    const second = await startServer({ db: first.db, args: ['--grpc-port', 'off'] });
    expect(second.pid).not.toBe(first.pid);
  });

  it('takes over the lock of a server that was killed', async () => {
    const first = await startServer({ args: ['--grpc-port', 'off'] });
    await first.kill9();
    expect(existsSync(`${first.db}.lock`)).toBe(true);
    const second = await startServer({ db: first.db, args: ['--grpc-port', 'off'] });
    expect((await postEvents(second.url, [])).status).toBe(200);
  });
});

/** A port free now: bound once, then released. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Whether `port` can be bound on loopback now. */
async function canListen(port: number): Promise<boolean> {
  const server = createServer();
  return new Promise((resolve) => {
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

// The tail starts after every port is bound: a --tail that cannot be followed
// must close them all again, or the process would stay up on its listening ports.
describe('serve and proxy: a --tail that cannot be followed', () => {
  const cases = [
    { name: 'a directory named without a glob', tail: (dir: string) => dir, message: (dir: string) => `--tail: ${dir} is a directory; follow the files in it with a glob such as "${dir}/*.txt"` },
    {
      name: 'a glob that is no glob',
      tail: (dir: string) => join(dir, '[z-a].log'),
      message: (dir: string) => `--tail: ${join(dir, '[z-a].log')} is not a path or glob (Invalid regular expression: /^[z-a]\\.log$/: Range out of order in character class); character classes such as [a-z] must be in order`,
    },
  ];
  it.each(cases)('$name: one line, exit 2, every port and the database free again', async ({ tail, message }) => {
    const dir = tempDir();
    const db = join(dir, 'a.db');
    const [http, grpc, proxy] = [await freePort(), await freePort(), await freePort()];
    const started = Date.now();
    const run = await serveToExit(['--port', String(http), '--grpc-port', String(grpc), '--proxy-port', String(proxy), '--db', db, '--tail', tail(dir)], 20_000, 'proxy');
    expect(run.code).toBe(2);
    expect(problems(run.stderr)).toEqual([`cachebreak proxy: ${message(dir)}`]);
    // Exits as soon as it has closed what it opened: no port kept the process up.
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(await canListen(http)).toBe(true);
    expect(await canListen(grpc)).toBe(true);
    expect(await canListen(proxy)).toBe(true);
    expect(existsSync(`${db}.lock`)).toBe(false);
  });
});

describe('serve: a busy gRPC port', () => {
  it('is one warning line; the server keeps serving HTTP and says gRPC is not served', async () => {
    const port = await busyPort();
    const server = await startServer({ args: ['--grpc-port', String(port)] });
    expect(server.grpcPort).toBeUndefined();
    const warnings = server.stderrLines.filter((line) => line.includes('level=warn') && !line.includes('event=open_access'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('event=grpc_not_served');
    expect(warnings[0]).toContain(`cannot serve OTLP/gRPC on 127.0.0.1:${port}: the port is already in use by another program`);
    expect(warnings[0]).toContain('--grpc-port off');
    expect(server.stdoutLines).toContain(`  OTLP/gRPC:     not served (port ${port}: the port is already in use by another program; OTLP over HTTP works on the HTTP port. Choose another --grpc-port (CACHEBREAK_GRPC_PORT), or --grpc-port off)`);
    const reply = await postEvents(server.url, [
      { type: 'turn', requestId: 'r1', sessionId: 's', ts: Date.now(), model: 'claude-sonnet-4-5', provider: 'anthropic', usage: { input_tokens: 10, cache_read_input_tokens: 0, cache_creation_input_tokens: 0, output_tokens: 1 } },
    ]);
    expect(reply.body).toEqual({ accepted: 1, duplicates: 0, rejected: [] });
  });
});

describe('serve: start lines', () => {
  it('name the page, the OTLP endpoints and whether breaks are exported', async () => {
    const server = await startServer();
    expect(server.stdoutLines).toEqual([
      expect.stringMatching(/^cachebreak listening on /),
      `  page:          ${server.url}/`,
      `  OTLP/HTTP:     ${server.url}/v1/logs, /v1/traces, /v1/metrics`,
      `  OTLP/gRPC:     127.0.0.1:${server.grpcPort}`,
      '  break export:  off (--otlp-export-endpoint URL sends every break to your OpenTelemetry collector)',
    ]);
  });

  it('say where breaks are exported, without the credentials of the URL', async () => {
    const server = await startServer({ args: ['--grpc-port', 'off', '--otlp-export-endpoint', 'http://user:secret@127.0.0.1:9/v1/logs'] });
    expect(server.stdoutLines.slice(3)).toEqual(['  OTLP/gRPC:     off (--grpc-port off)', expect.stringMatching(/^ {2}break export: {2}on, to http:\/\/127\.0\.0\.1:9\/v1\/logs \(/)]);
    expect(server.stdoutLines.join('\n')).not.toContain('secret');
  });
});
