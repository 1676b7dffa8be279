// Threads that answer requests for the main thread (the reader threads of
// the read routes). Each thread runs a module that calls serveThread
// (serve.ts); a request is answered by one thread, in turn. A thread that
// dies after it started is replaced, and the requests it held fail with a
// retryable 503 rather than hang.
import { Worker } from 'node:worker_threads';
import { CachebreakError } from '../errors.js';
import { createLogger, type Logger } from '../telemetry/logfmt.js';

/** What a thread sends back: an answer, a failure, a log line, or that it is ready. */
export type FromThread<Reply> =
  | { id: number; reply: Reply }
  | { id: number; failure: Failure }
  | { log: string }
  | { ready: true };

export interface ToThread<Request> {
  id: number;
  request: Request;
}

export interface PoolOptions {
  /** What the threads are for, in messages ("reader"). */
  name: string;
  /** The thread's module beside the caller, without extension: `new URL('./worker', import.meta.url)`. */
  module: URL;
  count: number;
  workerData: unknown;
}

/** How long a closing thread may take to finish what it holds. */
const CLOSE_MS = 10_000;

interface Thread<Reply> {
  worker: Worker;
  /** It has started: worth replacing if it dies. */
  ready: boolean;
  waiting: Map<number, { resolve: (reply: Reply) => void; reject: (error: Error) => void }>;
}

/**
 * A failure as it crosses threads: structured cloning keeps an SqliteError's
 * code but not its message. A TypeError or RangeError keeps its class, which
 * says the program refused a value it was given (store/sqlite/errors.ts).
 */
export interface Failure {
  message: string;
  code?: string;
  type?: 'TypeError' | 'RangeError';
}

export function failureOf(thrown: unknown): Failure {
  const { message, code } = (thrown ?? {}) as { message?: unknown; code?: unknown };
  const failure: Failure = { message: String(message || code || 'unknown error') };
  if (typeof code === 'string') failure.code = code;
  if (thrown instanceof TypeError) failure.type = 'TypeError';
  else if (thrown instanceof RangeError) failure.type = 'RangeError';
  return failure;
}

function errorOf(failure: Failure): Error {
  const error = failure.type === 'TypeError' ? new TypeError(failure.message) : failure.type === 'RangeError' ? new RangeError(failure.message) : new Error(failure.message);
  return Object.assign(error, failure.code === undefined ? {} : { code: failure.code });
}

/**
 * Compiled, the thread runs the module's .js file. Run from source (tests,
 * tsx), it first registers tsx's loader, which a worker thread does not inherit.
 */
function startWorker(options: PoolOptions): Worker {
  if (!import.meta.url.endsWith('.ts')) return new Worker(new URL(`${options.module.href}.js`), { workerData: options.workerData });
  const loader = JSON.stringify(import.meta.resolve('tsx/esm/api'));
  const entry = JSON.stringify(`${options.module.href}.ts`);
  const code = `import(${loader}).then((tsx) => { tsx.register(); return import(${entry}); });`;
  return new Worker(code, { eval: true, workerData: options.workerData });
}

export class ThreadPool<Request, Reply> {
  private readonly threads: Thread<Reply>[] = [];
  private readonly log: Logger;
  private next = 0;
  private sequence = 0;
  private closing = false;

  /** `stderr` takes the threads' log lines, already formatted, and the pool's own. */
  private constructor(
    private readonly options: PoolOptions,
    private readonly stderr: (line: string) => void,
  ) {
    this.log = createLogger(stderr);
  }

  /** Starts the threads and resolves once each has started; rejects with why one could not. */
  static async start<Request, Reply>(options: PoolOptions, stderr: (line: string) => void): Promise<ThreadPool<Request, Reply>> {
    const pool = new ThreadPool<Request, Reply>(options, stderr);
    const started = Array.from({ length: options.count }, () => pool.spawn());
    try {
      await Promise.all(started);
    } catch (error) {
      await pool.close();
      throw error;
    }
    return pool;
  }

  private spawn(): Promise<void> {
    const thread: Thread<Reply> = { worker: startWorker(this.options), ready: false, waiting: new Map() };
    this.threads.push(thread);
    const ready = new Promise<void>((resolve, reject) => {
      thread.worker.on('message', (message: FromThread<Reply>) => {
        if ('ready' in message) {
          thread.ready = true;
          return resolve();
        }
        if ('log' in message) return this.stderr(message.log);
        const waiting = thread.waiting.get(message.id);
        thread.waiting.delete(message.id);
        if ('failure' in message) waiting?.reject(errorOf(message.failure));
        else waiting?.resolve(message.reply);
      });
      const fail = (thrown: unknown) => {
        const error = errorOf(failureOf(thrown));
        reject(error);
        this.fail(thread, error);
      };
      thread.worker.on('error', fail);
      thread.worker.on('exit', (code) => fail(new Error(`${this.options.name} thread exited with code ${code}`)));
    });
    ready.catch(() => {}); // a replacement's failure is logged by fail(); start() awaits the first ones
    return ready;
  }

  /** Answers what `thread` held with 503 and, if it had started, puts a new thread in its place. */
  private fail(thread: Thread<Reply>, error: Error): void {
    const index = this.threads.indexOf(thread);
    if (index < 0) return; // 'error' and then 'exit' for the same thread
    this.threads.splice(index, 1);
    const unavailable = new CachebreakError('unavailable', `the ${this.options.name} thread stopped (${error.message})`, 'retry; the server starts a new one', {
      retryAfter: 1,
      cause: error,
    });
    for (const { reject } of thread.waiting.values()) reject(unavailable);
    thread.waiting.clear();
    if (this.closing) return;
    this.log.error('thread_failed', { thread: this.options.name, message: error.message, replaced: thread.ready });
    if (thread.ready) void this.spawn();
  }

  request(request: Request): Promise<Reply> {
    if (this.threads.length === 0) {
      return Promise.reject(
        new CachebreakError('unavailable', `no ${this.options.name} thread is running`, 'see the server log for why it stopped', { retryAfter: 5 }),
      );
    }
    const thread = this.threads[this.next++ % this.threads.length]!;
    const id = ++this.sequence;
    return new Promise((resolve, reject) => {
      thread.waiting.set(id, { resolve, reject });
      thread.worker.postMessage({ id, request } satisfies ToThread<Request>);
    });
  }

  /** Stops every thread: each answers what it holds and closes its database (serveThread), or is ended after CLOSE_MS. */
  async close(): Promise<void> {
    this.closing = true;
    await Promise.all(
      this.threads.map(async ({ worker }) => {
        const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
        const timer = setTimeout(() => void worker.terminate(), CLOSE_MS);
        worker.postMessage('close');
        await exited;
        clearTimeout(timer);
      }),
    );
  }
}
