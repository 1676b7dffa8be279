// Following real files in tests: a Tailer in this process writing a real
// store through the Pipeline, a writer in a separate child process
// (writer.mjs) that changes the files while it runs, and bounded waits.
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { afterEach } from 'vitest';
import { Pipeline } from '../../src/ingest/pipeline.js';
import { pipelineSink, Tailer, type TailOptions } from '../../src/ingest/tail/index.js';
import type { BreakRecord } from '../../src/core/types.js';
import type { ExternalBreak, Store } from '../../src/store/store.js';
import { Counters } from '../../src/telemetry/counters.js';
import { createLogger } from '../../src/telemetry/logfmt.js';

const running = { tailers: new Set<Tailer>(), writers: new Set<ChildProcess>() };

afterEach(async () => {
  for (const writer of running.writers) writer.kill('SIGKILL');
  running.writers.clear();
  await Promise.all([...running.tailers].map((t) => t.stop()));
  running.tailers.clear();
});

export interface Following {
  tailer: Tailer;
  notices: string[];
  rejected: string[];
  stop(): Promise<void>;
}

/** Follows `patterns` into `store` (project default), polling fast so that tests stay short. */
export async function follow(store: Store, patterns: string[], options: Partial<TailOptions> = {}): Promise<Following> {
  const pipeline = new Pipeline(store, new Counters(), createLogger(() => {}));
  const notices: string[] = [];
  const rejected: string[] = [];
  const tailer = new Tailer({ patterns, fromStart: false, batch: 1000, pollMs: 200, graceMs: 600, ...options }, pipelineSink(pipeline, store, 'default'), {
    notice: (message) => notices.push(message),
    rejected: (path, line, error) => rejected.push(`${path}:${line}: ${error}`),
  });
  running.tailers.add(tailer);
  await tailer.start();
  return {
    tailer,
    notices,
    rejected,
    stop: async () => {
      running.tailers.delete(tailer);
      await tailer.stop();
    },
  };
}

/** Polls `check` until it returns a value other than undefined; fails after `timeoutMs` with the last state. */
export async function waitFor<T>(what: string, check: () => Promise<T | undefined> | T | undefined, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms (last: ${JSON.stringify(last)?.slice(0, 500)})`);
    last = value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export type WriterCommand =
  | { op: 'append'; path: string; data: string; seed?: number; maxChunk?: number; delayMs?: number }
  | { op: 'open'; path: string; handle: string }
  | { op: 'appendHandle'; handle: string; data: string; seed?: number; maxChunk?: number; delayMs?: number }
  | { op: 'close'; handle: string }
  | { op: 'rename'; from: string; to: string }
  | { op: 'copytruncate'; path: string; to: string }
  | { op: 'symlink'; target: string; path: string }
  | { op: 'unlink'; path: string }
  | { op: 'mkdir'; path: string };

export interface Writer {
  /** Runs the commands in order in the writer process; resolves when the last is done. */
  run(...commands: WriterCommand[]): Promise<void>;
  /** Starts the commands and returns at once (they run while the test does other things). */
  start(...commands: WriterCommand[]): Promise<void>;
}

/** A writer process driven by commands on its stdin; killed after the test. */
export function startWriter(): Writer {
  const child = spawn(process.execPath, [new URL('./writer.mjs', import.meta.url).pathname], { stdio: ['pipe', 'pipe', 'inherit'] });
  running.writers.add(child);
  const waiting = new Map<number, { resolve: () => void; reject: (e: Error) => void }>();
  let sequence = 0;
  createInterface({ input: child.stdout! }).on('line', (line) => {
    const reply = JSON.parse(line) as { done: number; error?: string };
    const w = waiting.get(reply.done);
    waiting.delete(reply.done);
    if (reply.error) w?.reject(new Error(`writer: ${reply.error}`));
    else w?.resolve();
  });
  child.once('exit', (code, signal) => {
    for (const w of waiting.values()) w.reject(new Error(`writer exited (${code ?? signal})`));
  });
  const send = (commands: WriterCommand[]) =>
    Promise.all(
      commands.map(
        (command) =>
          new Promise<void>((resolve, reject) => {
            const id = ++sequence;
            waiting.set(id, { resolve, reject });
            child.stdin!.write(JSON.stringify({ id, ...command }) + '\n');
          }),
      ),
    ).then(() => undefined);
  return {
    run: (...commands) => send(commands),
    start: (...commands) => {
      const done = send(commands);
      done.catch(() => {});
      return Promise.resolve();
    },
  };
}

/** Every stored turn of the sessions, as requestId → state. */
export async function turnStates(store: Store, sessions: readonly string[]): Promise<Record<string, string | null>> {
  const out: Record<string, string | null> = {};
  for (const session of sessions) {
    for (const turn of (await store.sessionTurns('default', session)) ?? []) out[turn.requestId] = turn.state;
  }
  return out;
}

/** Every stored break, as requestId → reason, and every harness-reported break. */
export async function allBreaks(store: Store): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  let cursor: string | undefined;
  do {
    const page = await store.breaks('default', {}, {}, cursor === undefined ? { limit: 1000 } : { limit: 1000, cursor });
    for (const b of page.items as BreakRecord[]) out[b.requestId] = b.reason;
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined);
  return out;
}

export async function externalBreaks(store: Store): Promise<ExternalBreak[]> {
  return (await store.externalBreaks('default', {}, {}, { limit: 1000 })).items.sort((a, b) => a.ts - b.ts);
}
