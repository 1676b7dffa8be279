// Starting the write thread of a server that proxies (write-thread.ts) from
// the main thread. One thread: writes are made in the order the pipeline
// makes them, and the stream tails it keeps between them stay its own. If it
// dies, a new one starts (threads/pool.ts); the writes it held fail as
// retryable (503).
import type { DetectionOptions } from '../../core/options.js';
import type { PriceOverrides } from '../../prices/index.js';
import { ThreadPool } from '../../threads/pool.js';
import type { IngestBatch, WriteResult } from '../store.js';

/** What the thread opens and judges by: detection's settings but its prices, which are built from the overrides (a function does not cross threads). */
export interface WriteThreadData {
  path: string;
  synchronous?: 'normal' | 'full';
  detection: Omit<DetectionOptions, 'prices'>;
  priceOverrides: PriceOverrides;
}

export type WriteThread = ThreadPool<readonly IngestBatch[], WriteResult>;

export function startWriteThread(data: WriteThreadData, stderr: (line: string) => void): Promise<WriteThread> {
  return ThreadPool.start({ name: 'writer', module: new URL('./write-thread', import.meta.url), count: 1, workerData: data }, stderr);
}
