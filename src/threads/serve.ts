// The thread side of a ThreadPool (pool.ts): answers each request with
// `handle`, says when it is ready, and on close finishes what it holds before
// it lets the thread end.
import { parentPort, type Transferable } from 'node:worker_threads';
import { createLogger, type Logger } from '../telemetry/logfmt.js';
import { failureOf, type FromThread, type ToThread } from './pool.js';

const port = parentPort!;

/** A logger whose lines go to the main thread's log. */
export function threadLogger(): Logger {
  return createLogger((line) => port.postMessage({ log: line } satisfies FromThread<never>));
}

export function serveThread<Request, Reply>(
  handle: (request: Request) => Reply | Promise<Reply>,
  options: { transfer?: (reply: Reply) => Transferable[]; close?: () => void | Promise<void> } = {},
): void {
  const held = new Set<Promise<void>>();
  port.on('message', (message: ToThread<Request> | 'close') => {
    if (message === 'close') {
      void Promise.all(held)
        .then(() => options.close?.())
        .finally(() => port.close());
      return;
    }
    const answered = (async () => {
      try {
        const reply = await handle(message.request);
        port.postMessage({ id: message.id, reply } satisfies FromThread<Reply>, options.transfer?.(reply) ?? []);
      } catch (error) {
        port.postMessage({ id: message.id, failure: failureOf(error) } satisfies FromThread<Reply>);
      }
    })();
    held.add(answered);
    void answered.finally(() => held.delete(answered));
  });
  port.postMessage({ ready: true } satisfies FromThread<Reply>);
}
