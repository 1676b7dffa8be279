// A proxied request body as it passes through to the upstream: the bytes go
// on as they arrive (never held back), and a copy is kept for observation
// within --body-limit and the in-flight budget that ingest shares. Past
// either, the copy is dropped and the call goes on, forwarded and not
// observed: the proxy never refuses a model call for its own memory. A body
// that stops arriving is cut after --body-timeout, as on the main port.
import type { IncomingMessage } from 'node:http';
import { CachebreakError } from '../../errors.js';
import type { Holding } from '../inflight.js';

/** Why a call is not observed: the outcome counted, and the line logged. */
export interface Skipped {
  outcome: 'unreadable' | 'over_budget';
  error: string;
}

export class RequestCopy {
  private parts: Buffer[] = [];
  private size = 0;
  private released = false;
  /** Why there is no copy; undefined while there is one. */
  skipped: Skipped | undefined;

  constructor(
    /** The largest body copied (--body-limit). */
    private readonly limit: number,
    private readonly holding: Holding,
  ) {}

  push(chunk: Buffer): void {
    if (this.skipped !== undefined || this.released) return;
    this.size += chunk.length;
    if (this.size > this.limit) {
      this.drop({ outcome: 'unreadable', error: `request body: more than --body-limit (${this.limit} bytes) to read` });
      return;
    }
    try {
      this.holding.take(chunk.length);
    } catch (error) {
      if (!(error instanceof CachebreakError)) throw error;
      this.drop({ outcome: 'over_budget', error: `request body: ${error.message}` });
      return;
    }
    this.parts.push(chunk);
  }

  /** The whole copy, in one buffer; it still counts in the budget until release(), once it has been observed. */
  take(): Buffer {
    const body = Buffer.concat(this.parts, this.size);
    this.parts = [body];
    return body;
  }

  /** Drops the copy and gives back what it held, for good: what arrives after is not copied. */
  release(): void {
    this.released = true;
    this.parts = [];
    this.holding.release();
  }

  private drop(why: Skipped): void {
    this.skipped = why;
    this.release();
  }
}

/**
 * Calls `stalled` with the bytes read so far when no byte of the body arrives
 * for `idleMs`. While the upstream holds the body back (the request is
 * paused for it), the client is not waited on, and the clock starts again.
 */
export function watchBody(req: IncomingMessage, idleMs: number, stalled: (size: number) => void): void {
  let size = 0;
  const timer = setTimeout(function check() {
    if (req.isPaused()) timer.refresh();
    else stalled(size);
  }, idleMs);
  timer.unref();
  req.on('data', (chunk: Buffer) => {
    size += chunk.length;
    timer.refresh();
  });
  const stop = () => clearTimeout(timer);
  req.once('end', stop);
  req.once('close', stop);
}
