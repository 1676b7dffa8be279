// The write thread of a server that proxies: ingest writes (joining events
// into turns, judging each stream, writing rows and rollups) run here, on a
// connection of their own, so that no write holds the main thread, and with
// it the calls streaming through the proxy. Waiting for a lock another
// process holds is done here too, asleep in SQLite's busy handler. What
// other connections write (keys, OTLP halves, retention, other processes) is
// seen through data_version, as writer.ts does for any writer.
import { workerData } from 'node:worker_threads';
import { priceLookup } from '../../prices/index.js';
import { serveThread } from '../../threads/serve.js';
import { openDatabase } from '../db.js';
import type { IngestBatch, WriteResult } from '../store.js';
import { Dictionary } from './dictionary.js';
import type { WriteThreadData } from './write-thread-pool.js';
import { Writer } from './writer.js';

const data = workerData as WriteThreadData;
const { sqlite } = openDatabase(data.path, { backgroundCheckpoint: true, mustWrite: true, ...(data.synchronous ? { synchronous: data.synchronous } : {}) });
const writer = new Writer(sqlite, new Dictionary(sqlite), { ...data.detection, prices: priceLookup(data.priceOverrides) });

serveThread<readonly IngestBatch[], WriteResult>((batches) => writer.ingest(batches, true), {
  close: () => {
    sqlite.close();
  },
});
