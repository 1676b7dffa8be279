// Reader threads: each opens the database read-only (WAL lets readers and
// the writer work at once) and answers the read routes, so a dashboard
// refreshing never holds up ingest on the main thread.
import type { PriceOverrides } from '../../prices/index.js';
import { ThreadPool } from '../../threads/pool.js';

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
  /** Largest body of a read request (Grafana queries). */
  queryBodyLimit: number;
  /** The configured price overrides: the insights' dollars as detection prices them. */
  priceOverrides: PriceOverrides;
  /** --trace-link, for the break page. */
  traceLink?: string;
}

export type ReaderPool = ThreadPool<ReadRequest, ReadReply>;

export function startReaders(data: ReaderData, count: number, stderr: (line: string) => void): Promise<ReaderPool> {
  return ThreadPool.start({ name: 'reader', module: new URL('./worker', import.meta.url), count, workerData: data }, stderr);
}
