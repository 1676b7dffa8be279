// Copies the WAL back into the database file from a worker thread, so that a
// checkpoint (page copies and an fsync) never stalls ingest on the main one.
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/** How often the worker checkpoints; PASSIVE never blocks the writer. */
const INTERVAL_MS = 250;

// Evaluated as a CommonJS script in the worker (it must run whether this
// module was compiled or is being run from source).
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.path, { fileMustExist: true });
db.pragma('busy_timeout = 100');
const timer = setInterval(() => {
  try { db.pragma('wal_checkpoint(PASSIVE)'); } catch { /* busy: next time */ }
}, workerData.intervalMs);
parentPort.on('message', () => { clearInterval(timer); db.close(); parentPort.close(); });
`;

export interface Checkpointer {
  stop(): Promise<void>;
}

export function startCheckpointer(path: string): Checkpointer {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  const worker = new Worker(WORKER, { eval: true, workerData: { path, driver, intervalMs: INTERVAL_MS } });
  // A failed checkpointer costs only speed: the writer's own autocheckpoint still bounds the WAL.
  worker.on('error', () => {});
  worker.unref();
  return {
    async stop() {
      const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
      // Waiting for the exit must keep the process alive until it comes.
      worker.ref();
      worker.postMessage('stop');
      await exited;
    },
  };
}
