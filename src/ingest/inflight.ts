// Bytes of request bodies held at once, across every ingest request: each
// request holds what it has read (and decompressed) until it is answered.
// Past the budget a request is refused with 503 and Retry-After, so that many
// large requests arriving together cannot exhaust memory; what the pipeline
// queues is bounded separately (--queue-limit).
import { CachebreakError } from '../errors.js';

/** What one request holds of the budget. */
export interface Holding {
  /** Holds `bytes` more; throws a 503 CachebreakError when the budget has no room. */
  take(bytes: number): void;
  /** Gives back everything held, once the request is answered. */
  release(): void;
}

export class InflightBudget {
  private held = 0;

  constructor(readonly limit: number) {}

  open(): Holding {
    let mine = 0;
    return {
      take: (bytes) => {
        if (this.held + bytes > this.limit) {
          throw new CachebreakError(
            'unavailable',
            `the server is holding ${this.held} bytes of request bodies (--inflight-limit ${this.limit} bytes); nothing from this request was stored`,
            'retry after the delay in Retry-After, or raise --inflight-limit',
            { retryAfter: 1 },
          );
        }
        this.held += bytes;
        mine += bytes;
      },
      release: () => {
        this.held -= mine;
        mine = 0;
      },
    };
  }
}
