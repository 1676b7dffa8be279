// Bytes of request bodies held at once, across every ingest request: each
// request holds what it has read (and decompressed) until it is answered.
// Past the budget a request is refused with 503 and Retry-After, so that many
// large requests arriving together cannot exhaust memory; what the pipeline
// queues is bounded separately (--queue-limit). One client (an API key, or an
// address when there is none) holds at most its share of the budget, past
// which it is refused with 429, so that its slow or stalled uploads cannot
// starve everyone else.
import { CachebreakError } from '../errors.js';

/** What one request holds of the budget. */
export interface Holding {
  /** Holds `bytes` more; throws a 429 (over the client's share) or 503 (over the budget) CachebreakError. */
  take(bytes: number): void;
  /** Gives back everything held, once the request is answered. */
  release(): void;
}

/** Who a request comes from, for the shares: its API key, else its address. */
export function clientOf(keyId: number | null, address: string | undefined): string {
  return keyId !== null ? `key ${keyId}` : `address ${address ?? 'unknown'}`;
}

export class InflightBudget {
  private held = 0;
  private readonly byClient = new Map<string, number>();

  /** `share`: what one client may hold at once, at most `limit`. */
  constructor(
    readonly limit: number,
    readonly share: number = limit,
  ) {}

  open(client: string): Holding {
    let mine = 0;
    return {
      take: (bytes) => {
        const theirs = this.byClient.get(client) ?? 0;
        if (this.held + bytes > this.limit) {
          throw new CachebreakError(
            'unavailable',
            `the server is holding ${this.held} bytes of request bodies (--inflight-limit ${this.limit} bytes); nothing from this request was stored`,
            'retry after the delay in Retry-After, or raise --inflight-limit',
            { retryAfter: 1 },
          );
        }
        if (theirs + bytes > this.share) {
          throw new CachebreakError(
            'rate_limited',
            `this client (${client}) is already sending ${theirs} bytes of request bodies, its share of --inflight-limit being ${this.share} bytes; nothing from this request was stored`,
            'retry after the delay in Retry-After, once earlier requests are answered, or send fewer requests at once',
            { retryAfter: 1 },
          );
        }
        this.held += bytes;
        this.byClient.set(client, theirs + bytes);
        mine += bytes;
      },
      release: () => {
        this.held -= mine;
        const left = (this.byClient.get(client) ?? 0) - mine;
        if (left > 0) this.byClient.set(client, left);
        else this.byClient.delete(client);
        mine = 0;
      },
    };
  }
}
