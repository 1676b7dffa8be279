// The harness's sender to a cachebreak server: events are queued (bounded)
// and POSTed to /v1/events in batches, gzipped where the runtime can;
// 429 and 503 are retried with backoff, honouring Retry-After. It never
// throws into the harness, not even on bad options: every failure is counted
// and reported to onError. It never holds the harness's process: its timers
// do not keep Node running, and shutdown (or the flush when the event loop
// empties) gives up after shutdownTimeoutMs.
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
  /** One request's time limit, the answer's body included. Default 10,000 ms. */
  timeoutMs?: number;
  /**
   * How long shutdown(), and the flush when Node's event loop empties, keep
   * trying; then the request under way is abandoned and what is unsent is
   * dropped, counted and reported (kind `shutdown_timeout`). Default 5,000 ms.
   */
  shutdownTimeoutMs?: number;
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
  kind: 'queue_full' | 'rejected_events' | 'refused' | 'gave_up' | 'invalid_event' | 'invalid_options' | 'shutdown_timeout';
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
  accepted: number;
  duplicates?: number;
  rejected?: { index: number; error: string }[];
}

type Settings = Required<Omit<ClientOptions, 'apiKey' | 'fetch' | 'onError' | 'url'>>;

const DEFAULTS: Settings = {
  maxQueue: 10_000,
  batchSize: 500,
  flushIntervalMs: 1_000,
  maxRetries: 5,
  backoffMs: 500,
  maxBackoffMs: 30_000,
  timeoutMs: 10_000,
  shutdownTimeoutMs: 5_000,
  gzip: true,
  flushOnExit: true,
};

/** The least each numeric option may be. */
const MINIMUM: Partial<Record<keyof Settings, number>> = {
  maxQueue: 0,
  batchSize: 1,
  flushIntervalMs: 0,
  maxRetries: 0,
  backoffMs: 0,
  maxBackoffMs: 0,
  timeoutMs: 1,
  shutdownTimeoutMs: 0,
};

/** The endpoint and settings of `config`, or what is wrong with it. */
function settle(config: ClientOptions | undefined): { endpoint: string; settings: Settings } | { problem: string } {
  if (typeof config !== 'object' || config === null) return { problem: 'the options must be an object with at least `url`' };
  let endpoint: URL;
  try {
    endpoint = new URL('/v1/events', config.url);
  } catch {
    return { problem: `url ${JSON.stringify(String(config.url)).slice(0, 200)} is not a URL: give the server's base URL, e.g. "http://127.0.0.1:4318"` };
  }
  if (endpoint.protocol !== 'http:' && endpoint.protocol !== 'https:') return { problem: `url must be http: or https:, not ${endpoint.protocol}` };
  const settings = { ...DEFAULTS };
  for (const [name, least] of Object.entries(MINIMUM) as [keyof Settings, number][]) {
    const value = config[name];
    if (value === undefined) continue;
    if (typeof value !== 'number' || !Number.isFinite(value) || value < least) return { problem: `${name} must be a number of at least ${least}, not ${String(value).slice(0, 50)}` };
    (settings[name] as number) = value;
  }
  for (const name of ['gzip', 'flushOnExit'] as const) {
    if (config[name] !== undefined && typeof config[name] !== 'boolean') return { problem: `${name} must be true or false` };
    settings[name] = config[name] ?? DEFAULTS[name];
  }
  if (config.fetch !== undefined && typeof config.fetch !== 'function') return { problem: 'fetch must be a function' };
  settings.gzip &&= typeof CompressionStream === 'function';
  return { endpoint: endpoint.toString(), settings };
}

/** A timer that does not keep Node running, cut short by `signal`. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = unref(setTimeout(done, ms));
    signal.addEventListener('abort', done, { once: true });
  });
}

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
  private readonly options: Settings;
  /** What is wrong with the options given, when something is: every event is then dropped. */
  private readonly invalid: string | undefined;
  private readonly queue: WireEvent[] = [];
  private timer: ReturnType<typeof setTimeout> | undefined;
  private sending: Promise<void> | undefined;
  /** Aborted when a shutdown deadline passes: the request under way and the backoff end, and what is unsent is dropped. */
  private cutoff = new AbortController();
  private stopped = false;
  private readonly exitHook: (() => void) | undefined;
  /** What it sent, and what it could not. */
  readonly stats: ClientStats = { queued: 0, sent: 0, accepted: 0, duplicates: 0, rejected: 0, dropped: 0, retries: 0, requests: 0, failures: 0 };

  constructor(private readonly config: ClientOptions) {
    const settled = settle(config);
    if ('problem' in settled) {
      this.endpoint = '';
      this.options = DEFAULTS;
      this.invalid = settled.problem;
      this.fail({ kind: 'invalid_options', message: `cachebreak client: ${settled.problem}; every event will be dropped`, events: 0 });
      return;
    }
    this.endpoint = settled.endpoint;
    this.options = settled.settings;
    const node = (globalThis as { process?: { once?: (event: string, fn: () => void) => void; off?: (event: string, fn: () => void) => void } }).process;
    if (this.options.flushOnExit && typeof node?.once === 'function') {
      this.exitHook = () => void this.flushWithin(this.options.shutdownTimeoutMs);
      node.once('beforeExit', this.exitHook);
    }
  }

  /** Queues an event (a domain event or one already in SPEC §2 form); never throws. */
  send(event: CacheEvent | WireEvent): void {
    try {
      if (this.invalid !== undefined) {
        this.stats.dropped++;
        this.fail({ kind: 'invalid_options', message: `the event was dropped: ${this.invalid}`, events: 1 });
        return;
      }
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

  /**
   * Sends everything queued; resolves when done or given up (retries and
   * timeoutMs bound it, not shutdownTimeoutMs). Never rejects.
   */
  async flush(): Promise<void> {
    // The backoff's timers do not keep Node running; a caller awaiting the flush does.
    const hold = setInterval(() => undefined, 60_000);
    try {
      while (this.queue.length > 0 || this.sending !== undefined) {
        this.kick();
        await this.sending;
      }
    } catch {
      // Counted where it happened.
    } finally {
      clearInterval(hold);
    }
  }

  /**
   * Flushes for at most shutdownTimeoutMs (what is unsent then is dropped,
   * counted and reported), then takes no more events. Never rejects.
   */
  async shutdown(): Promise<void> {
    await this.flushWithin(this.options.shutdownTimeoutMs);
    this.stopped = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    const node = (globalThis as { process?: { off?: (event: string, fn: () => void) => void } }).process;
    if (this.exitHook) node?.off?.('beforeExit', this.exitHook);
  }

  /** Flushes; after `ms`, abandons the request under way and drops what is unsent. */
  private async flushWithin(ms: number): Promise<void> {
    const cutoff = this.cutoff;
    const deadline = setTimeout(() => cutoff.abort(), ms);
    try {
      await this.flush();
    } finally {
      clearTimeout(deadline);
      // A later flush starts with a deadline of its own.
      if (cutoff.signal.aborted && this.cutoff === cutoff) this.cutoff = new AbortController();
    }
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
    let last = 'none';
    for (let attempt = 0; ; attempt++) {
      if (this.cutoff.signal.aborted) {
        // The deadline passed: this batch and the rest of the queue are dropped, reported once.
        const unsent = batch.length + this.queue.splice(0).length;
        this.stats.queued = 0;
        this.stats.dropped += unsent;
        this.fail({ kind: 'shutdown_timeout', message: `${unsent} event(s) unsent when the shutdown deadline passed (shutdownTimeoutMs ${this.options.shutdownTimeoutMs}); last attempt: ${last}`, events: unsent });
        return;
      }
      const outcome = await this.post(batch);
      if (outcome.done) return;
      last = outcome.why;
      if (this.cutoff.signal.aborted) continue;
      if (outcome.waitMs === undefined || attempt >= this.options.maxRetries) {
        this.stats.dropped += batch.length;
        const kind = outcome.waitMs === undefined ? 'refused' : 'gave_up';
        const message = kind === 'gave_up' ? `${outcome.why}; gave up after ${attempt + 1} attempts` : outcome.why;
        this.fail({ kind, message, events: batch.length, ...(outcome.status === undefined ? {} : { status: outcome.status }) });
        return;
      }
      this.stats.retries++;
      await sleep(Math.min(this.options.maxBackoffMs, Math.max(outcome.waitMs, backoff)), this.cutoff.signal);
      backoff = Math.min(this.options.maxBackoffMs, backoff * 2);
    }
  }

  private async post(batch: WireEvent[]): Promise<Outcome> {
    const text = JSON.stringify({ events: batch });
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (this.config.apiKey !== undefined) headers.authorization = `Bearer ${this.config.apiKey}`;
    let response: Response;
    let answer: string;
    this.stats.requests++;
    // One request's time limit, its answer's body included; a shutdown deadline cuts it short.
    const abort = new AbortController();
    const timer = unref(setTimeout(() => abort.abort(new Error(`no answer within ${this.options.timeoutMs} ms (timeoutMs)`)), this.options.timeoutMs));
    const cutoff = this.cutoff.signal;
    const cut = () => abort.abort(new Error('the shutdown deadline passed'));
    cutoff.addEventListener('abort', cut, { once: true });
    try {
      let body: string | Uint8Array = text;
      if (this.options.gzip) {
        body = await gzipped(text);
        headers['content-encoding'] = 'gzip';
      }
      response = await (this.config.fetch ?? fetch)(this.endpoint, { method: 'POST', headers, body: body as RequestInit['body'], signal: abort.signal });
      answer = await response.text().catch(() => '');
    } catch (error) {
      const reason = abort.signal.aborted ? (abort.signal.reason as Error) : (error as Error);
      return { done: false, waitMs: 0, why: `POST ${this.endpoint} failed: ${reason.message}` };
    } finally {
      clearTimeout(timer);
      cutoff.removeEventListener('abort', cut);
    }
    if (response.status === 429 || response.status >= 500) {
      const waitMs = retryAfterMs(response.headers.get('retry-after')) ?? 0;
      return { done: false, waitMs, why: `the server answered ${response.status}: ${answer.slice(0, 200)}`, status: response.status };
    }
    if (!response.ok) return { done: false, waitMs: undefined, why: `the server refused the batch (${response.status}): ${answer.slice(0, 200)}`, status: response.status };
    const read = readAnswer(answer);
    if (read === undefined) {
      // A 2xx that is not cachebreak's answer (an HTML page, a proxy's login): nothing says the events were stored.
      const type = response.headers.get('content-type') ?? '(none)';
      return { done: false, waitMs: undefined, why: `the answer (${response.status}, ${type.slice(0, 80)}) is not cachebreak's: is ${this.endpoint} a cachebreak server? ${answer.slice(0, 200)}`, status: response.status };
    }
    this.count(batch, read);
    return { done: true };
  }

  private count(batch: WireEvent[], answer: Answer): void {
    this.stats.sent += batch.length;
    this.stats.accepted += answer.accepted;
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

/** The body of POST /v1/events' answer, when it is one. */
function readAnswer(text: string): Answer | undefined {
  try {
    const answer = JSON.parse(text) as Partial<Answer> | null;
    if (typeof answer !== 'object' || answer === null || typeof answer.accepted !== 'number') return undefined;
    return { accepted: answer.accepted, duplicates: typeof answer.duplicates === 'number' ? answer.duplicates : 0, rejected: Array.isArray(answer.rejected) ? answer.rejected : [] };
  } catch {
    return undefined;
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
