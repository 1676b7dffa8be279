// A thread for the pool's tests: echoes, fails (a TypeError too), or ends the thread when asked;
// refuses to start at all when told to in its workerData.
import { workerData } from 'node:worker_threads';
import { serveThread } from '../../src/threads/serve.js';

if ((workerData as { failStart?: boolean }).failStart) throw Object.assign(new Error(''), { code: 'SQLITE_CANTOPEN' });

serveThread<string, string>((request) => {
  if (request === 'throw') throw new Error('asked to fail');
  if (request === 'type') throw new TypeError('a value it cannot bind');
  if (request === 'exit') process.exit(3);
  return `echo ${request}`;
});
