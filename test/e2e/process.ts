// Runs the built CLI (`node dist/cli.js serve`, or `proxy`) as a real child process on
// loopback. Free of vitest so that scripts (make-fixture-db.ts) can use it;
// test/e2e/server.ts adds per-test cleanup on top.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { request as httpRequest, type Agent } from 'node:http';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export const CLI = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));

/** Generous for 2 busy cores; a healthy start takes well under a second. */
const START_TIMEOUT_MS = 15_000;
const STOP_TIMEOUT_MS = 10_000;

const LISTENING = /^cachebreak listening on (http:\/\/127\.0\.0\.1:\d+)(?:, OTLP\/gRPC on 127\.0\.0\.1:(\d+))?(?:, proxy on (http:\/\/127\.0\.0\.1:\d+))? \(database (.*?); (open: no API key|locked: API keys required)\)$/;

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface ServerProcess {
  url: string;
  /** The OTLP/gRPC port, unless started with --grpc-port off. */
  grpcPort: number | undefined;
  /** The provider proxy's base URL, when started as `proxy`. */
  proxyUrl: string | undefined;
  db: string;
  /** What the start line says: open (no API key) or locked. */
  access: 'open' | 'locked';
  pid: number;
  /** Every stderr line so far (logfmt), without the newline. */
  stderrLines: string[];
  /** Every stdout line so far: the listening line first, then where the page and the OTLP endpoints are. */
  stdoutLines: string[];
  /** Resolves when the process has exited. */
  exited: Promise<Exit>;
  /** Sends `signal` (default SIGTERM) and waits for the exit, at most STOP_TIMEOUT_MS. */
  stop(signal?: NodeJS.Signals): Promise<Exit>;
  /** SIGKILL: no handler runs, nothing is flushed or closed. */
  kill9(): Promise<Exit>;
  /** Waits, bounded, until at least `count` stderr lines match. */
  waitForStderr(match: (line: string) => boolean, count?: number, timeoutMs?: number): Promise<string[]>;
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no result within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** The environment without CACHEBREAK_* settings, so only the flags given here configure the server. */
function cleanEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('CACHEBREAK_')));
}

/** Another `cachebreak` executable than this checkout's build (an installed package), run in `cwd`. */
export interface Executable {
  path: string;
  cwd: string;
}

/**
 * `nodeArgs` go to node itself, before the script: e.g. ['--max-old-space-size=128'].
 * `proxy` adds the provider proxy on a free port.
 */
export async function spawnServer(
  db: string,
  extraArgs: readonly string[] = [],
  nodeArgs: readonly string[] = [],
  command: 'serve' | 'proxy' = 'serve',
  executable?: Executable,
): Promise<ServerProcess> {
  if (!executable && !existsSync(CLI)) throw new Error(`${CLI} is missing: run "npm run build" first (npm test does)`);
  // A free gRPC port unless the caller chose one (or "off"): never the fixed default 4317.
  const choosesGrpc = extraArgs.some((arg) => arg === '--grpc-port' || arg.startsWith('--grpc-port='));
  const grpc = choosesGrpc ? [] : ['--grpc-port', '0'];
  const proxy = command === 'proxy' ? ['--proxy-port', '0'] : [];
  const args = [command, '--host', '127.0.0.1', '--port', '0', ...grpc, ...proxy, '--db', db, ...extraArgs];
  const child = executable
    ? spawn(executable.path, args, { cwd: executable.cwd, env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] })
    : spawn(process.execPath, [...nodeArgs, CLI, ...args], { env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
  const stderrLines: string[] = [];
  const stdoutLines: string[] = [];
  const watchers = new Set<() => void>();
  createInterface({ input: child.stderr }).on('line', (line) => {
    stderrLines.push(line);
    for (const watcher of watchers) watcher();
  });
  const exited = new Promise<Exit>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });

  type Started = Pick<ServerProcess, 'url' | 'grpcPort' | 'proxyUrl' | 'db' | 'access'>;
  const listening = new Promise<Started>((resolve, reject) => {
    createInterface({ input: child.stdout }).on('line', (line) => {
      stdoutLines.push(line);
      const match = LISTENING.exec(line);
      if (match) resolve({ url: match[1]!, grpcPort: match[2] === undefined ? undefined : Number(match[2]), proxyUrl: match[3], db: match[4]!, access: match[5]!.startsWith('open') ? 'open' : 'locked' });
    });
    void exited.then((exit) =>
      reject(new Error(`server exited (${JSON.stringify(exit)}) before listening; stderr:\n${stderrLines.join('\n')}`)),
    );
  });
  let started: Started;
  try {
    started = await withTimeout(listening, START_TIMEOUT_MS, 'waiting for "cachebreak listening on"');
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
  if (!LISTENING.test(stdoutLines[0] ?? '')) throw new Error(`expected the listening line first on stdout, got ${JSON.stringify(stdoutLines)}`);

  const stop = async (signal: NodeJS.Signals = 'SIGTERM'): Promise<Exit> => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    try {
      return await withTimeout(exited, STOP_TIMEOUT_MS, `stopping the server with ${signal}`);
    } catch (error) {
      child.kill('SIGKILL');
      throw error;
    }
  };

  return {
    url: started.url,
    grpcPort: started.grpcPort,
    proxyUrl: started.proxyUrl,
    db: started.db,
    access: started.access,
    pid: child.pid!,
    stderrLines,
    stdoutLines,
    exited,
    stop,
    kill9: () => stop('SIGKILL'),
    waitForStderr(match, count = 1, timeoutMs = 5_000) {
      const found = () => stderrLines.filter(match);
      return withTimeout(
        new Promise<string[]>((resolve) => {
          const check = () => {
            const lines = found();
            if (lines.length >= count) {
              watchers.delete(check);
              resolve(lines);
            }
          };
          watchers.add(check);
          check();
        }),
        timeoutMs,
        `waiting for ${count} matching stderr line(s); stderr so far:\n${stderrLines.join('\n')}`,
      );
    },
  };
}

// ---- HTTP over loopback -------------------------------------------------

export interface Reply {
  status: number;
  headers: Headers;
  text: string;
  /** The parsed JSON body, or undefined when the body is not JSON. */
  body: unknown;
}

const REQUEST_TIMEOUT_MS = 10_000;

export async function request(url: string, path: string, init: RequestInit = {}): Promise<Reply> {
  const response = await fetch(url + path, { signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS), ...init });
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, body: parseBody(text) };
}

/** GET that must answer 200 with JSON. */
export async function getJson<T = unknown>(url: string, path: string): Promise<T> {
  const reply = await request(url, path);
  if (reply.status !== 200) throw new Error(`GET ${path}: ${reply.status} ${reply.text}`);
  return reply.body as T;
}

/** POST /v1/events with a JSON value, as application/json. */
export function postEvents(url: string, events: unknown, headers: Record<string, string> = {}): Promise<Reply> {
  return request(url, '/v1/events', {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(events),
  });
}

export interface RawRequest {
  method?: string;
  headers?: Record<string, string>;
  /** One buffer is sent with Content-Length; a list of chunks is sent chunked, without one. */
  body?: Buffer | readonly Buffer[];
  /** Default: a new connection for this request only. */
  agent?: Agent;
}

function parseBody(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * A request over node:http, for what fetch cannot express: an exact body
 * framing (chunked, no Content-Length) and a connection of the caller's
 * choosing. Bounded by REQUEST_TIMEOUT_MS.
 */
export function rawRequest(url: string, path: string, options: RawRequest = {}): Promise<Reply> {
  const { hostname, port } = new URL(url);
  const body = options.body;
  const headers: Record<string, string> = { ...options.headers };
  if (Buffer.isBuffer(body)) headers['content-length'] = String(body.length);
  return new Promise<Reply>((resolve, reject) => {
    const req = httpRequest(
      { host: hostname, port, path, method: options.method ?? 'GET', headers, agent: options.agent ?? false, timeout: REQUEST_TIMEOUT_MS },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const replyHeaders = new Headers();
          for (const [key, value] of Object.entries(res.headers)) if (typeof value === 'string') replyHeaders.set(key, value);
          resolve({ status: res.statusCode ?? 0, headers: replyHeaders, text, body: parseBody(text) });
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${path}: no answer within ${REQUEST_TIMEOUT_MS} ms`)));
    // The server may answer (413) and stop reading before the whole body is
    // written; the answer is what counts, so write errors after it are ignored.
    req.on('error', (error) => reject(error));
    if (body === undefined) req.end();
    else if (Buffer.isBuffer(body)) req.end(body);
    else {
      for (const chunk of body) req.write(chunk);
      req.end();
    }
  });
}
