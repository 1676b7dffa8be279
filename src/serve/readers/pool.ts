// Reader threads: each opens the database read-only (WAL lets readers and
// the writer work at once) and answers the read routes, so a dashboard
// refreshing never holds up ingest on the main thread. A thread that dies
// after it started is replaced; the requests it held are answered 503 rather
// than left hanging.
import { Worker } from 'node:worker_threads';
import { CachebreakError } from '../../errors.js';
import { createLogger, type Logger } from '../../telemetry/logfmt.js';

/** A read request, whole: the main thread has already checked its key. */
export interface ReadRequest {
  method: string;
  url: string;
  headers: [string, string][];
  body: Uint8Array | null;
}

export interface ReadReply {
  status: number;
  headers: [string, string][];
  body: ArrayBuffer;
}

/** What a reader thread needs to build its app. */
export interface ReaderData {
  path: string;
  bodyLimit: number;
}

export type ToReader = ReadRequest & { id: number };
export type FromReader = { id: number; reply: ReadReply } | { log: string } | { ready: true };

interface Reader {
  worker: Worker;
  /** It has built its app and opened the database: worth replacing if it dies. */
  ready: boolean;
  waiting: Map<number, { resolve: (reply: ReadReply) => void; reject: (error: Error) => void }>;
}

/**
 * Compiled, the thread runs worker.js. Run from source (tests, tsx), it first
 * registers tsx's loader, which a worker thread does not inherit.
 */
function startWorker(data: ReaderData): Worker {
  if (!import.meta.url.endsWith('.ts')) return new Worker(new URL('./worker.js', import.meta.url), { workerData: data });
  const loader = JSON.stringify(import.meta.resolve('tsx/esm/api'));
  const entry = JSON.stringify(new URL('./worker.ts', import.meta.url).href);
  return new Worker(`import(${loader}).then((tsx) => { tsx.register(); return import(${entry}); });`, { eval: true, workerData: data });
}

/** A thread's error arrives structured-cloned: an SqliteError keeps its code but not its message. */
function asError(thrown: unknown): Error {
  if (thrown instanceof Error && thrown.message) return thrown;
  const { message, code } = (thrown ?? {}) as { message?: unknown; code?: unknown };
  return new Error(String(message || code || 'unknown error'));
}

export class ReaderPool {
  private readonly readers: Reader[] = [];
  private next = 0;
  private sequence = 0;
  private closing = false;

  private readonly log: Logger;

  /** `stderr` takes the threads' log lines, already formatted, and the pool's own. */
  private constructor(
    private readonly data: ReaderData,
    private readonly stderr: (line: string) => void,
  ) {
    this.log = createLogger(stderr);
  }

  /** Starts `count` threads and resolves once each has opened the database; rejects with why one could not. */
  static async start(data: ReaderData, count: number, stderr: (line: string) => void): Promise<ReaderPool> {
    const pool = new ReaderPool(data, stderr);
    const started = Array.from({ length: count }, () => pool.spawn());
    try {
      await Promise.all(started.map((s) => s.ready));
    } catch (error) {
      await pool.close();
      throw error;
    }
    return pool;
  }

  private spawn(): { reader: Reader; ready: Promise<void> } {
    const reader: Reader = { worker: startWorker(this.data), ready: false, waiting: new Map() };
    this.readers.push(reader);
    const ready = new Promise<void>((resolve, reject) => {
      reader.worker.on('message', (message: FromReader) => {
        if ('ready' in message) {
          reader.ready = true;
          return resolve();
        }
        if ('log' in message) return this.stderr(message.log);
        const waiting = reader.waiting.get(message.id);
        reader.waiting.delete(message.id);
        waiting?.resolve(message.reply);
      });
      const fail = (thrown: unknown) => {
        const error = asError(thrown);
        reject(error);
        this.fail(reader, error);
      };
      reader.worker.on('error', fail);
      reader.worker.on('exit', (code) => fail(new Error(`reader thread exited with code ${code}`)));
    });
    ready.catch(() => {}); // a replacement's failure is logged by fail(); start() awaits the first ones
    return { reader, ready };
  }

  /** Answers what `reader` held with 503 and, if it had started, puts a new thread in its place. */
  private fail(reader: Reader, error: Error): void {
    const index = this.readers.indexOf(reader);
    if (index < 0) return; // 'error' and then 'exit' for the same thread
    this.readers.splice(index, 1);
    const unavailable = new CachebreakError('unavailable', `the reader thread stopped (${error.message})`, 'retry; the server starts a new one', {
      retryAfter: 1,
      cause: error,
    });
    for (const { reject } of reader.waiting.values()) reject(unavailable);
    reader.waiting.clear();
    if (this.closing) return;
    this.log.error('reader_failed', { message: error.message, replaced: reader.ready });
    if (reader.ready) this.spawn();
  }

  request(request: ReadRequest): Promise<ReadReply> {
    if (this.readers.length === 0) {
      return Promise.reject(
        new CachebreakError('unavailable', 'no reader thread is running', 'see the server log for why; --read-workers 0 answers reads on the main thread'),
      );
    }
    const reader = this.readers[this.next++ % this.readers.length]!;
    const id = ++this.sequence;
    return new Promise((resolve, reject) => {
      reader.waiting.set(id, { resolve, reject });
      reader.worker.postMessage({ id, ...request } satisfies ToReader);
    });
  }

  async close(): Promise<void> {
    this.closing = true;
    await Promise.all(this.readers.map(({ worker }) => worker.terminate()));
  }
}
