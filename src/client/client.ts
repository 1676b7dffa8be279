// The harness's sender to a cachebreak server: events are queued (bounded)
// and POSTed to /v1/events in batches, gzipped where the runtime can;
// 429 and 503 are retried with backoff, honouring Retry-After. It never
// throws into the harness: every failure is counted and reported to onError.
import { toWireEvent, type WireEvent } from '../core/wire.js';
import type { CacheEvent } from '../core/types.js';

export type { WireEvent };

export interface ClientOptions {
  /** The server's base URL, e.g. "http://127.0.0.1:4319". */
  url: string;
  /** Sent as "Authorization: Bearer <key>" (a server with API keys requires one). */
  apiKey?: string;
  /** Events held at most; beyond it new events are dropped and counted. Default 10,000. */
  maxQueue?: number;
  /** Events per request. Default 500. */
  batchSize?: number;
  /** How long an event may wait for a batch to fill. Default 1,000 ms. */
  flushIntervalMs?: number;
  /** Attempts per batch on 429, 503 or a network failure, after the first. Default 5. */
  maxRetries?: number;
  /** The first backoff; each retry doubles it, up to maxBackoffMs, unless Retry-After says otherwise. Default 500 ms. */
  backoffMs?: number;
  maxBackoffMs?: number;
  /** One request's time limit. Default 10,000 ms. */
  timeoutMs?: number;
  /** Gzip the body (Content-Encoding: gzip) where CompressionStream exists. Default true. */
  gzip?: boolean;
  /** The fetch to use. Default the global one. */
  fetch?: typeof fetch;
  /** Told of every failure: a dropped event, a batch refused or given up. Never throws back. */
  onError?: (failure: ClientFailure) => void;
  /** In Node, flush when the event loop empties (beforeExit). Default true. */
  flushOnExit?: boolean;
}

export interface ClientFailure {
  kind: 'queue_full' | 'rejected_events' | 'refused' | 'gave_up' | 'invalid_event';
  message: string;
  /** Events concerned. */
  events: number;
  /** The HTTP status, when there was an answer. */
  status?: number;
}

export interface ClientStats {
  /** Events waiting to be sent. */
  queued: number;
  /** Events the server answered for: accepted, duplicate or rejected. */
  sent: number;
  accepted: number;
  duplicates: number;
  /** Events the server refused one by one (its rejected[]). */
  rejected: number;
  /** Events never delivered: queue full, batch refused or retries exhausted. */
  dropped: number;
  /** Requests retried. */
  retries: number;
  requests: number;
  failures: number;
}

/** The server's answer to POST /v1/events (SPEC §2). */
interface Answer {
  accepted?: number;
  duplicates?: number;
  rejected?: { index: number; error: string }[];
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Retry-After in ms: seconds, or an HTTP date; undefined when absent or unreadable. */
export function retryAfterMs(header: string | null, now = Date.now()): number | undefined {
  if (header === null || header.trim() === '') return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(header);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

async function gzipped(text: string): Promise<Uint8Array> {
  const stream = new Blob([text]).stream().pipeThrough(new CompressionStream('gzip'));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

type Outcome = { done: true } | { done: false; waitMs: number | undefined; why: string; status?: number };

/**
 * Sends events to a cachebreak server's POST /v1/events in batches; never
 * throws into the harness (failures go to onError and `stats`).
 */
export class CachebreakClient {
  private readonly endpoint: string;
  private readonly options: Required<Omit<ClientOptions, 'apiKey' | 'fetch' | 'onError' | 'url'>>;
  private readonly queue: WireEvent[] = [];
  private timer: ReturnType<typeof setTimeout> | undefined;
  private sending: Promise<void> | undefined;
  private stopped = false;
  private readonly exitHook: (() => void) | undefined;
  /** What it sent, and what it could not. */
  readonly stats: ClientStats = { queued: 0, sent: 0, accepted: 0, duplicates: 0, rejected: 0, dropped: 0, retries: 0, requests: 0, failures: 0 };

  constructor(private readonly config: ClientOptions) {
    this.endpoint = new URL('/v1/events', config.url).toString();
    this.options = {
      maxQueue: config.maxQueue ?? 10_000,
      batchSize: Math.max(1, config.batchSize ?? 500),
      flushIntervalMs: config.flushIntervalMs ?? 1_000,
      maxRetries: config.maxRetries ?? 5,
      backoffMs: config.backoffMs ?? 500,
      maxBackoffMs: config.maxBackoffMs ?? 30_000,
      timeoutMs: config.timeoutMs ?? 10_000,
      gzip: (config.gzip ?? true) && typeof CompressionStream === 'function',
      flushOnExit: config.flushOnExit ?? true,
    };
    const node = (globalThis as { process?: { once?: (event: string, fn: () => void) => void; off?: (event: string, fn: () => void) => void } }).process;
    if (this.options.flushOnExit && typeof node?.once === 'function') {
      this.exitHook = () => void this.flush();
      node.once('beforeExit', this.exitHook);
    }
  }

  /** Queues an event (a domain event or one already in SPEC §2 form); never throws. */
  send(event: CacheEvent | WireEvent): void {
    try {
      if (this.stopped || this.queue.length >= this.options.maxQueue) {
        this.fail({ kind: 'queue_full', message: this.stopped ? 'the client was shut down' : `the queue holds ${this.options.maxQueue} events (maxQueue)`, events: 1 });
        this.stats.dropped++;
        return;
      }
      this.queue.push(isDomain(event) ? toWireEvent(event) : event);
      this.stats.queued = this.queue.length;
      if (this.queue.length >= this.options.batchSize) this.kick();
      else this.timer ??= unref(setTimeout(() => this.kick(), this.options.flushIntervalMs));
    } catch (error) {
      this.stats.dropped++;
      this.fail({ kind: 'invalid_event', message: `the event could not be queued: ${(error as Error).message}`, events: 1 });
    }
  }

  /** Sends everything queued; resolves when done or given up. Never rejects. */
  async flush(): Promise<void> {
    try {
      do {
        this.kick();
        await this.sending;
      } while (this.queue.length > 0);
    } catch {
      // Counted where it happened.
    }
  }

  /** Flushes, then takes no more events. Never rejects. */
  async shutdown(): Promise<void> {
    await this.flush();
    this.stopped = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    const node = (globalThis as { process?: { off?: (event: string, fn: () => void) => void } }).process;
    if (this.exitHook) node?.off?.('beforeExit', this.exitHook);
  }

  private kick(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.sending ??= this.drain().finally(() => {
      this.sending = undefined;
    });
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, this.options.batchSize);
      this.stats.queued = this.queue.length;
      await this.deliver(batch);
    }
  }

  /** One batch, retried while retrying can help. */
  private async deliver(batch: WireEvent[]): Promise<void> {
    let backoff = this.options.backoffMs;
    for (let attempt = 0; ; attempt++) {
      const outcome = await this.post(batch);
      if (outcome.done) return;
      if (outcome.waitMs === undefined || attempt >= this.options.maxRetries) {
        this.stats.dropped += batch.length;
        const kind = outcome.waitMs === undefined ? 'refused' : 'gave_up';
        const message = kind === 'gave_up' ? `${outcome.why}; gave up after ${attempt + 1} attempts` : outcome.why;
        this.fail({ kind, message, events: batch.length, ...(outcome.status === undefined ? {} : { status: outcome.status }) });
        return;
      }
      this.stats.retries++;
      await sleep(Math.min(this.options.maxBackoffMs, Math.max(outcome.waitMs, backoff)));
      backoff = Math.min(this.options.maxBackoffMs, backoff * 2);
    }
  }

  private async post(batch: WireEvent[]): Promise<Outcome> {
    const text = JSON.stringify({ events: batch });
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (this.config.apiKey !== undefined) headers.authorization = `Bearer ${this.config.apiKey}`;
    let response: Response;
    this.stats.requests++;
    try {
      let body: string | Uint8Array = text;
      if (this.options.gzip) {
        body = await gzipped(text);
        headers['content-encoding'] = 'gzip';
      }
      response = await (this.config.fetch ?? fetch)(this.endpoint, { method: 'POST', headers, body: body as RequestInit['body'], signal: AbortSignal.timeout(this.options.timeoutMs) });
    } catch (error) {
      return { done: false, waitMs: 0, why: `POST ${this.endpoint} failed: ${(error as Error).message}` };
    }
    const answer = await response.text().catch(() => '');
    if (response.status === 429 || response.status >= 500) {
      const waitMs = retryAfterMs(response.headers.get('retry-after')) ?? 0;
      return { done: false, waitMs, why: `the server answered ${response.status}: ${answer.slice(0, 200)}`, status: response.status };
    }
    if (!response.ok) return { done: false, waitMs: undefined, why: `the server refused the batch (${response.status}): ${answer.slice(0, 200)}`, status: response.status };
    this.count(batch, answer);
    return { done: true };
  }

  private count(batch: WireEvent[], text: string): void {
    let answer: Answer = {};
    try {
      answer = JSON.parse(text) as Answer;
    } catch {
      // A 2xx without the contract's body: the events were taken.
    }
    this.stats.sent += batch.length;
    this.stats.accepted += answer.accepted ?? 0;
    this.stats.duplicates += answer.duplicates ?? 0;
    const rejected = answer.rejected ?? [];
    this.stats.rejected += rejected.length;
    if (rejected.length > 0) {
      const shown = rejected.slice(0, 3).map((r) => r.error).join('; ');
      this.fail({ kind: 'rejected_events', message: `${rejected.length} event(s) rejected: ${shown}`, events: rejected.length, status: 200 });
    }
  }

  private fail(failure: ClientFailure): void {
    this.stats.failures++;
    try {
      this.config.onError?.(failure);
    } catch {
      // The harness's own handler failing must not reach the harness either.
    }
  }
}

function isDomain(event: CacheEvent | WireEvent): event is CacheEvent {
  const usage = (event as { usage?: unknown }).usage;
  // A domain usage is already normalised; a wire usage is the provider's raw object.
  return typeof usage === 'object' && usage !== null && 'cacheReported' in usage;
}

function unref<T>(timer: T): T {
  (timer as { unref?: () => void }).unref?.();
  return timer;
}
