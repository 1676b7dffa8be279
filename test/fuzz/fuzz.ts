// Runs fuzz inputs through a target and records what failed: an unclear
// error, a crash, or an input that took too long. The decoders run in a
// worker thread (worker.ts), one input at a time; this thread watches which
// input it is on and, when one runs past the time bound, terminates the
// worker, reports that input (a hang, kept as a regression like any other
// failure) and goes on with the next in a new worker. A worker that dies
// (an exit, running out of memory) is reported the same way.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { hashString } from '../../src/core/hash.js';
import { fuzzInput, Random } from './mutate.js';
import type { FuzzTarget } from './targets.js';

/**
 * No input may take longer than this; one that does is stopped at it. A hang
 * is caught all the same, and generous enough that a busy 2-core CI machine
 * (a GC pause, a starved thread) never fails an input that is merely slow.
 */
export const INPUT_BUDGET_MS = 2_000;

/** How often this thread looks at which input the worker is on. */
const WATCH_MS = 10;

/** Inputs sent to the worker at a time. */
const CHUNK = 500;

/** A decoder that allocates without bound fails the input instead of the machine. */
const WORKER_HEAP_MB = 1_024;

export const REGRESSIONS = fileURLToPath(new URL('../fixtures/fuzz/', import.meta.url));

export interface Failure {
  input: Buffer;
  problem: string;
}

export interface FuzzReport {
  target: string;
  inputs: number;
  failures: Failure[];
  slowestMs: number;
}

/** Worker messages (worker.ts). */
export interface ChunkRequest {
  target: string;
  inputs: Uint8Array[];
}
export interface ChunkFailure {
  index: number;
  problem: string;
}
/** A failure as soon as it happens (so that a later hang does not lose it), then the end of the chunk. */
export type WorkerMessage = ({ kind: 'failure' } & ChunkFailure) | { kind: 'done'; slowestMs: number };

/** One input, in the worker: no problem when the target behaved. */
export async function check(target: FuzzTarget, input: Buffer): Promise<{ problem?: string; ms: number }> {
  const start = performance.now();
  try {
    await target.run(input);
  } catch (error) {
    return { problem: `${(error as Error).name}: ${(error as Error).message}`.slice(0, 300), ms: performance.now() - start };
  }
  const ms = performance.now() - start;
  return ms > INPUT_BUDGET_MS ? { problem: `took ${ms.toFixed(0)} ms`, ms } : { ms };
}

interface Running {
  worker: Worker;
  /** [0]: the index in the chunk of the input being run, -1 between chunks; [1]: inputs started. */
  heartbeat: Int32Array;
  /** Why the worker stopped, once it has. */
  gone: Promise<string>;
}

/** The worker thread that runs the targets, replaced whenever an input stops it. */
export class Fuzzer {
  private running: Running | undefined;

  /** Starts the first worker (it loads every target once). */
  static async start(): Promise<Fuzzer> {
    const fuzzer = new Fuzzer();
    fuzzer.running = await Fuzzer.spawn();
    return fuzzer;
  }

  private static async spawn(): Promise<Running> {
    const shared = new SharedArrayBuffer(8);
    const heartbeat = new Int32Array(shared);
    heartbeat[0] = -1;
    const worker = new Worker(new URL('./boot.mjs', import.meta.url), {
      workerData: { module: new URL('./worker.ts', import.meta.url).href, heartbeat: shared },
      resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB },
      // Not the flags of the thread that made it: under vitest's (--conditions development among
      // them) the decoders ran twice as slow here. Plain node, as they run in production.
      execArgv: [],
    });
    const gone = new Promise<string>((resolve) => {
      worker.once('error', (error) => resolve(`the worker failed: ${error.name}: ${error.message}`.slice(0, 300)));
      worker.once('exit', (code) => resolve(`the worker exited with code ${code}`));
    });
    const ready = new Promise<void>((resolve) => worker.once('message', () => resolve()));
    const outcome = await Promise.race([ready.then(() => undefined), gone]);
    if (outcome !== undefined) throw new Error(`fuzz worker did not start: ${outcome}`);
    return { worker, heartbeat, gone };
  }

  /** Runs every input through the target, each bounded by INPUT_BUDGET_MS; returns the failures, input by input. */
  async run(target: string, inputs: readonly Buffer[]): Promise<{ failures: Failure[]; slowestMs: number }> {
    const failures: Failure[] = [];
    let slowestMs = 0;
    let from = 0;
    while (from < inputs.length) {
      const chunk = inputs.slice(from, from + CHUNK);
      const outcome = await this.chunk(target, chunk);
      slowestMs = Math.max(slowestMs, outcome.slowestMs);
      for (const f of outcome.failures) failures.push({ input: chunk[f.index]!, problem: f.problem });
      // Stopped at an input: go on after it, in a new worker.
      from += outcome.stoppedAt === undefined ? chunk.length : outcome.stoppedAt + 1;
    }
    return { failures, slowestMs };
  }

  private async chunk(target: string, chunk: readonly Buffer[]): Promise<{ failures: ChunkFailure[]; slowestMs: number; stoppedAt?: number }> {
    const running = this.running ?? (this.running = await Fuzzer.spawn());
    const { worker, heartbeat, gone } = running;
    const failures: ChunkFailure[] = [];
    let onMessage: ((message: WorkerMessage) => void) | undefined;
    const done = new Promise<number>((resolve) => {
      onMessage = (message) => {
        if (message.kind === 'failure') failures.push(message);
        else resolve(message.slowestMs);
      };
      worker.on('message', onMessage);
    });
    let timer: NodeJS.Timeout | undefined;
    // The input the worker is on, and since when this thread has seen it there.
    let seen = Atomics.load(heartbeat, 1);
    let since = performance.now();
    const hang = new Promise<number>((resolve) => {
      timer = setInterval(() => {
        const started = Atomics.load(heartbeat, 1);
        if (started !== seen) {
          seen = started;
          since = performance.now();
          return;
        }
        const index = Atomics.load(heartbeat, 0);
        if (index >= 0 && performance.now() - since > INPUT_BUDGET_MS) resolve(index);
      }, WATCH_MS);
    });
    // Copies of the inputs, moved to the worker rather than copied again.
    const request: ChunkRequest = { target, inputs: chunk.map((b) => new Uint8Array(b)) };
    worker.postMessage(request, request.inputs.map((i) => i.buffer as ArrayBuffer));
    try {
      const first = await Promise.race([
        done.then((slowestMs) => ({ kind: 'done' as const, slowestMs })),
        hang.then((index) => ({ kind: 'hang' as const, index })),
        gone.then((why) => ({ kind: 'gone' as const, why })),
      ]);
      if (first.kind === 'done') return { failures, slowestMs: first.slowestMs };
      // The input at heartbeat[0] stopped the worker (or never ended): it is the failure. The
      // failures before it were reported as they happened.
      const index = first.kind === 'hang' ? first.index : Atomics.load(heartbeat, 0);
      this.running = undefined;
      await worker.terminate();
      if (index < 0) throw new Error(`the fuzz worker stopped between inputs: ${first.kind === 'gone' ? first.why : 'no progress'}`);
      failures.push({ index, problem: first.kind === 'hang' ? `no answer within ${INPUT_BUDGET_MS} ms: stopped` : first.why });
      return { failures, slowestMs: INPUT_BUDGET_MS, stoppedAt: index };
    } finally {
      clearInterval(timer);
      worker.off('message', onMessage!);
    }
  }

  async close(): Promise<void> {
    await this.running?.worker.terminate();
    this.running = undefined;
  }
}

/** `inputs` random and mutated inputs from the target's corpus (deterministic for a seed), through the fuzzer. */
export async function fuzz(fuzzer: Fuzzer, target: FuzzTarget, inputs: number, seed: number): Promise<FuzzReport> {
  const random = new Random(seed);
  const report: FuzzReport = { target: target.name, inputs, failures: [], slowestMs: 0 };
  const generate = (count: number) => Array.from({ length: count }, () => fuzzInput(target.corpus, random, target.json));
  let next = generate(Math.min(CHUNK, inputs));
  for (let done = 0; done < inputs; ) {
    const batch = next;
    const pending = fuzzer.run(target.name, batch);
    done += batch.length;
    // The next chunk is made while the worker runs this one.
    next = generate(Math.min(CHUNK, inputs - done));
    const { failures, slowestMs } = await pending;
    report.failures.push(...failures);
    report.slowestMs = Math.max(report.slowestMs, slowestMs);
  }
  return report;
}

/** Every input that ever failed is kept, named by its hash, and replayed by the tests. */
export function keepRegression(target: string, input: Buffer): string {
  const dir = join(REGRESSIONS, target);
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${hashString(input.toString('latin1'))}.bin`);
  writeFileSync(file, input);
  return file;
}

/** The kept inputs of a target, with their files. */
export function regressions(target: string): { file: string; input: Buffer }[] {
  const dir = join(REGRESSIONS, target);
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith('.bin'))
    .sort()
    .map((f) => ({ file: join(dir, f), input: readFileSync(join(dir, f)) }));
}

/**
 * What under test/fixtures/fuzz/ would not be replayed: a folder not named after a target, a file
 * beside the folders (but the README), a file in a folder that is not a kept input (*.bin).
 */
export function strayRegressions(targetNames: ReadonlySet<string>): string[] {
  if (!existsSync(REGRESSIONS)) return [];
  const stray: string[] = [];
  for (const entry of readdirSync(REGRESSIONS, { withFileTypes: true })) {
    if (!entry.isDirectory()) {
      if (entry.name !== 'README.md') stray.push(entry.name);
      continue;
    }
    if (!targetNames.has(entry.name)) stray.push(`${entry.name}/`);
    else for (const file of readdirSync(join(REGRESSIONS, entry.name))) if (!file.endsWith('.bin')) stray.push(`${entry.name}/${file}`);
  }
  return stray.sort();
}
