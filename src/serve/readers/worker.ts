// A reader thread: the read routes over a read-only connection, answering
// the requests the main thread forwards (pool.ts).
import { parentPort, workerData } from 'node:worker_threads';
import { buildReadApp } from '../../app.js';
import { DEFAULT_DETECTION } from '../../core/options.js';
import { SqliteStore } from '../../store/sqlite/store.js';
import { createLogger } from '../../telemetry/logfmt.js';
import type { FromReader, ReaderData, ToReader } from './pool.js';

const data = workerData as ReaderData;
const port = parentPort!;
const app = buildReadApp({
  store: new SqliteStore(data.path, DEFAULT_DETECTION, { readonly: true }),
  log: createLogger((line) => port.postMessage({ log: line } satisfies FromReader)),
  bodyLimit: data.bodyLimit,
  now: Date.now,
});

port.postMessage({ ready: true } satisfies FromReader);

port.on('message', async ({ id, method, url, headers, body }: ToReader) => {
  const response = await app.request(url, { method, headers, ...(body ? { body } : {}) });
  const reply = { status: response.status, headers: [...response.headers], body: await response.arrayBuffer() };
  port.postMessage({ id, reply } satisfies FromReader, [reply.body]);
});
