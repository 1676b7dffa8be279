// Entry of a fuzz worker thread: TypeScript through tsx, then the worker
// module (worker.ts). Plain JavaScript, since a worker starts without the
// loader of the thread (vitest's or tsx's) that made it.
import { workerData } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
await import(workerData.module);
