// A reader thread: the read routes over a read-only connection, answering
// the requests the main thread forwards (pool.ts).
import { workerData } from 'node:worker_threads';
import { buildReadApp } from '../../app.js';
import { priceLookup, SERVICE_DETECTION } from '../../prices/index.js';
import { SqliteStore } from '../../store/sqlite/store.js';
import { serveThread, threadLogger } from '../../threads/serve.js';
import type { ReaderData, ReadReply, ReadRequest } from './pool.js';

const data = workerData as ReaderData;
const store = new SqliteStore(data.path, SERVICE_DETECTION, { readonly: true });
const app = buildReadApp({ store, log: threadLogger(), queryBodyLimit: data.queryBodyLimit, now: Date.now, prices: priceLookup(data.priceOverrides), ...(data.traceLink === undefined ? {} : { traceLink: data.traceLink }) });

serveThread<ReadRequest, ReadReply>(
  async ({ method, url, headers, body }) => {
    const response = await app.request(url, { method, headers, ...(body ? { body } : {}) });
    return { status: response.status, headers: [...response.headers], body: await response.arrayBuffer() };
  },
  { transfer: (reply) => [reply.body], close: () => store.close() },
);
