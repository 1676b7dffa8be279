// The observer thread (observer.ts): builds each call's event where the
// stream lineage is kept.
import { workerData } from 'node:worker_threads';
import { serveThread } from '../../threads/serve.js';
import { StreamLineage } from './identity.js';
import { observe, type Observation } from './observe.js';
import type { ObserverData, ObserveRequest } from './observer.js';

const { limits, bodyLimit } = workerData as ObserverData;
const lineage = new StreamLineage();

serveThread<ObserveRequest, Observation>(({ project, call }) => {
  // A Buffer crosses threads as a plain Uint8Array.
  const body = Buffer.from(call.body.buffer, call.body.byteOffset, call.body.byteLength);
  return observe({ ...call, body }, limits, bodyLimit, (snapshot, chain) => lineage.identityOf(project, call.requestHeaders, snapshot, limits.maxString, chain));
});
