// The one way in: every receiver hands its domain events to `ingest`. Requests
// that arrive together are written in one transaction (group commit: one
// commit instead of one per request), and each is answered, with its own
// counts, only once its events are durable. New breaks go to the log and to
// subscribers; everything is counted.
import type { CacheEvent } from '../core/types.js';
import { CachebreakError } from '../errors.js';
import type {
  BatchCounts,
  EventRejection,
  ExternalBreak,
  IngestBatch,
  Pairing,
  ProjectBreak,
  Store,
  TailCheckpoint,
  TokenPoint,
  WaitBounds,
  WaitingHalf,
  WriteResult,
} from '../store/store.js';
import { breakFields, externalBreakFields } from '../telemetry/break-line.js';
import { TOKEN_KINDS, type Counters } from '../telemetry/counters.js';
import type { Logger } from '../telemetry/logfmt.js';
import { LogThrottle } from '../telemetry/throttle.js';
import { DEFAULT_LIMITS, eventProblem, type Limits } from './limits.js';

export type Receiver = 'http' | 'otlp_http' | 'otlp_grpc' | 'tail' | 'import' | 'demo' | 'proxy';

export type BreakSubscriber = (entry: ProjectBreak) => void;

/** A break a harness reported itself, stored for the first time. */
export type ExternalBreakSubscriber = (entry: { project: string; record: ExternalBreak }) => void;

/** What the file tailer stores beside events: harness-reported breaks, and its checkpoint in the same transaction. */
export interface TailExtras {
  externalBreaks?: readonly ExternalBreak[];
  checkpoint?: TailCheckpoint;
}

export interface PipelineOptions {
  /** Events waiting to be written, past which new requests are refused (429). */
  queueLimit: number;
  /** What every event is held to, whichever receiver built it; default DEFAULT_LIMITS. */
  limits?: Limits;
}

/** A few seconds of ingest at full speed: enough to absorb bursts, small enough to bound memory. */
export const DEFAULT_QUEUE_LIMIT = 200_000;

interface Pending {
  batch: IngestBatch;
  /** Events plus token points: what the queue limit and group size count. */
  size: number;
  receiver: Receiver;
  resolve: (counts: BatchCounts) => void;
  reject: (error: unknown) => void;
}

/** One transaction takes at most this many events, so that a commit stays short. */
const GROUP_EVENTS = 20_000;

/** Event times further ahead of this server's clock are stored, and said in the log: the sender's clock is off. */
const AHEAD_MS = 86_400_000;

export class Pipeline {
  private readonly subscribers: BreakSubscriber[] = [];
  private readonly revisionSubscribers: BreakSubscriber[] = [];
  private readonly externalSubscribers: ExternalBreakSubscriber[] = [];
  private readonly queue: Pending[] = [];
  private queuedEvents = 0;
  private scheduled = false;
  /** A full disk fails every write: one store_unavailable line per code and minute, not one per request. */
  private readonly repeated = new LogThrottle();

  constructor(
    private readonly store: Store,
    private readonly counters: Counters,
    private readonly log: Logger,
    private readonly options: PipelineOptions = { queueLimit: DEFAULT_QUEUE_LIMIT },
  ) {}

  subscribe(subscriber: BreakSubscriber): void {
    this.subscribers.push(subscriber);
  }

  /** Breaks reported before that late events judged again, with their new record. */
  subscribeRevisions(subscriber: BreakSubscriber): void {
    this.revisionSubscribers.push(subscriber);
  }

  subscribeExternal(subscriber: ExternalBreakSubscriber): void {
    this.externalSubscribers.push(subscriber);
  }

  /**
   * Pairs a half of an OTLP join through the store (Store.pairHalf), or puts
   * a taken one back; rejects with a 503 CachebreakError, as a write does,
   * when the store cannot serve.
   */
  async pairHalf(project: string, half: WaitingHalf, bounds: WaitBounds, putBack = false): Promise<Pairing> {
    try {
      return await (putBack ? this.store.putBackHalf(project, half, bounds) : this.store.pairHalf(project, half, bounds));
    } catch (error) {
      throw this.storeError(error);
    }
  }

  /** Counts events a receiver could not decode; they never reach the store. */
  rejected(project: string, receiver: Receiver, count: number): void {
    this.counters.inc('events', { project, receiver, outcome: 'rejected' }, count);
  }

  /**
   * Resolves when the events (and token points, from OTLP metrics) are
   * durable, with the events not stored (over a limit, or refused by the
   * store) in `rejected`; rejects with a 429/503 CachebreakError when they
   * cannot be taken.
   */
  ingest(
    project: string,
    events: readonly CacheEvent[],
    receiver: Receiver,
    tokenPoints: readonly TokenPoint[] = [],
    extras: TailExtras = {},
  ): Promise<BatchCounts> {
    const refused: EventRejection[] = [];
    const kept: CacheEvent[] = [];
    /** The index in `events` of each kept event. */
    const indices: number[] = [];
    events.forEach((event, index) => {
      const problem = eventProblem(event, this.options.limits ?? DEFAULT_LIMITS);
      if (problem) refused.push({ event: index, ...problem });
      else {
        kept.push(event);
        indices.push(index);
      }
    });
    if (refused.length === 0) return this.enqueue(project, events, receiver, tokenPoints, extras);
    this.rejected(project, receiver, refused.length);
    return this.enqueue(project, kept, receiver, tokenPoints, extras).then((counts) => {
      const rejected = [...refused, ...(counts.rejected ?? []).map((r) => ({ ...r, event: indices[r.event]! }))].sort((a, b) => a.event - b.event);
      return { ...counts, rejected };
    });
  }

  private enqueue(
    project: string,
    events: readonly CacheEvent[],
    receiver: Receiver,
    tokenPoints: readonly TokenPoint[],
    extras: TailExtras,
  ): Promise<BatchCounts> {
    this.warnAhead(project, receiver, events);
    const external = extras.externalBreaks ?? [];
    // A checkpoint alone still has to be written.
    const size = events.length + tokenPoints.length + external.length + (extras.checkpoint ? 1 : 0);
    if (size === 0) return Promise.resolve({ accepted: 0, duplicates: 0 });
    if (this.queuedEvents > 0 && this.queuedEvents + size > this.options.queueLimit) {
      return Promise.reject(
        new CachebreakError(
          'rate_limited',
          `the ingest queue is full (${this.queuedEvents} events waiting, --queue-limit ${this.options.queueLimit}); nothing from this request was stored`,
          'retry after the delay in Retry-After; send smaller batches or fewer at once, or raise --queue-limit',
          { retryAfter: 1 },
        ),
      );
    }
    return new Promise((resolve, reject) => {
      const batch: IngestBatch = tokenPoints.length > 0 ? { project, events, tokenPoints } : { project, events };
      if (external.length > 0) batch.externalBreaks = external;
      if (extras.checkpoint) batch.checkpoint = extras.checkpoint;
      this.queue.push({ batch, size, receiver, resolve, reject });
      this.queuedEvents += size;
      this.schedule();
    });
  }

  /** One line per project and minute when events come with times more than a day ahead. */
  private warnAhead(project: string, receiver: Receiver, events: readonly CacheEvent[]): void {
    const bound = Date.now() + AHEAD_MS;
    let ahead = 0;
    let first: CacheEvent | undefined;
    for (const event of events) {
      const ts = Math.max(event.ts ?? 0, event.type === 'turn' ? (event.endTs ?? 0) : 0);
      if (ts > bound) {
        ahead++;
        first ??= event;
      }
    }
    if (first === undefined) return;
    const suppressed = this.repeated.admit(`ahead\u0000${project}`);
    if (suppressed === undefined) return;
    this.log.warn('event_time_ahead', {
      project,
      receiver,
      events: ahead,
      requestId: first.requestId,
      message: "event times more than a day ahead of this server's clock: stored as sent; check the sender's clock",
      ...(suppressed > 0 ? { suppressed } : {}),
    });
  }

  private schedule(): void {
    if (this.scheduled || this.queue.length === 0) return;
    this.scheduled = true;
    // After the current I/O callbacks, so that requests that arrived together are written together.
    setImmediate(() => void this.flush());
  }

  private async flush(): Promise<void> {
    const group: Pending[] = [];
    let events = 0;
    while (this.queue.length > 0 && (group.length === 0 || events + this.queue[0]!.size <= GROUP_EVENTS)) {
      const next = this.queue.shift()!;
      events += next.size;
      group.push(next);
    }
    try {
      await this.writeGroup(group);
    } finally {
      this.scheduled = false;
      this.schedule();
    }
  }

  private async writeGroup(group: Pending[]): Promise<void> {
    let result: WriteResult;
    try {
      result = await this.store.write(group.map((p) => p.batch));
    } catch (error) {
      if (group.length > 1) {
        // Alone, each request gets its own outcome: one cannot fail the others.
        for (const pending of group) await this.writeGroup([pending]);
        return;
      }
      const pending = group[0]!;
      if (this.retryable(error) || pending.batch.events.length === 0) {
        this.leave(pending).reject(this.storeError(error));
        return;
      }
      let counts: BatchCounts;
      try {
        counts = await this.writeInParts(pending, pending.batch.events, 0, true);
      } catch (partError) {
        this.leave(pending).reject(this.storeError(partError));
        return;
      }
      this.leave(pending).resolve(counts);
      return;
    }
    this.announce(result, group);
    group.forEach((pending, i) => this.leave(pending).resolve(result.counts[i]!));
  }

  /**
   * A request whose write failed for a reason other than the database being
   * unavailable: written in halves, down to the single events that fail,
   * which are reported as rejected; every other event is stored. Its token
   * points, harness breaks and checkpoint go with its last part.
   */
  private async writeInParts(pending: Pending, events: readonly CacheEvent[], offset: number, last: boolean): Promise<BatchCounts> {
    const { project, tokenPoints, externalBreaks, checkpoint } = pending.batch;
    const extras = { tokenPoints, externalBreaks, checkpoint };
    const part: IngestBatch = { project, events };
    if (last && tokenPoints) part.tokenPoints = tokenPoints;
    if (last && externalBreaks) part.externalBreaks = externalBreaks;
    if (last && checkpoint) part.checkpoint = checkpoint;
    try {
      const result = await this.store.write([part]);
      this.announce(result, [{ ...pending, batch: part }]);
      const counts = result.counts[0]!;
      return counts.rejected ? { ...counts, rejected: counts.rejected.map((r) => ({ ...r, event: r.event + offset })) } : counts;
    } catch (error) {
      if (this.retryable(error)) throw error;
      if (events.length > 1) {
        const middle = events.length >> 1;
        const first = await this.writeInParts(pending, events.slice(0, middle), offset, false);
        return addCounts(first, await this.writeInParts(pending, events.slice(middle), offset + middle, last));
      }
      const event = events[0];
      if (event === undefined) throw error;
      const message = (error as Error).message;
      const suppressed = this.repeated.admit(`not_stored\u0000${project}`);
      if (suppressed !== undefined) {
        this.log.error('event_not_stored', { project, receiver: pending.receiver, requestId: event.requestId, message, ...(suppressed > 0 ? { suppressed } : {}) });
      }
      this.counters.inc('events', { project, receiver: pending.receiver, outcome: 'rejected' });
      const rejected = { accepted: 0, duplicates: 0, rejected: [{ event: offset, field: 'event', problem: `could not be stored (${message}); the rest of the request was` }] };
      return last && hasExtras(extras) ? addCounts(rejected, await this.writeInParts(pending, [], offset + 1, true)) : rejected;
    }
  }

  /** Takes a request's events off the queue before it is answered: a client that sends again at once finds the room. */
  private leave(pending: Pending): Pending {
    this.queuedEvents -= pending.size;
    return pending;
  }

  /**
   * Whether a failed write is the sender's to retry: anything but a refusal
   * of its data (the store's word), as the OpenTelemetry Collector does. A
   * database that is away, read-only, full, or fails in a way not known is
   * never taken for bad events.
   */
  private retryable(error: unknown): boolean {
    return this.store.classifyError(error) !== 'data';
  }

  private storeError(error: unknown): unknown {
    if (!this.retryable(error)) return error;
    const message = (error as Error | null)?.message ?? String(error);
    // The driver's connection errors have a message and no code.
    const code = String((error as { code?: unknown } | null)?.code ?? message);
    const suppressed = this.repeated.admit(code);
    if (suppressed !== undefined) this.log.error('store_unavailable', { code, message, ...(suppressed > 0 ? { suppressed } : {}) });
    return new CachebreakError(
      'unavailable',
      `the database cannot take writes right now (${code}); nothing from this request was stored`,
      'retry after the delay in Retry-After; if it persists, check that the database is reachable and writable and has free disk space (the server log says more)',
      { retryAfter: 5, cause: error },
    );
  }

  private announce(result: WriteResult, group: Pending[]): void {
    const c = this.counters;
    group.forEach((pending, i) => {
      const labels = { project: pending.batch.project, receiver: pending.receiver };
      c.inc('events', { ...labels, outcome: 'accepted' }, result.counts[i]!.accepted);
      c.inc('events', { ...labels, outcome: 'duplicate' }, result.counts[i]!.duplicates);
      c.inc('events', { ...labels, outcome: 'rejected' }, result.counts[i]!.rejected?.length ?? 0);
      // At 0 until a cut body counts (OTLP), so that a dashboard's increase() sees the first.
      c.expose('bodiesTruncated', { project: pending.batch.project });
    });
    // Summed per label set first: a write holds thousands of turns but few label sets.
    const sums = new Map<string, { base: Record<string, string>; state: string; turns: number; tokens: number[] }>();
    for (const turn of result.observed) {
      const key = `${turn.project}\u0000${turn.model}\u0000${turn.provider}\u0000${turn.state}`;
      let sum = sums.get(key);
      if (!sum) {
        sum = { base: { project: turn.project, model: turn.model, provider: turn.provider }, state: turn.state, turns: 0, tokens: [0, 0, 0, 0] };
        sums.set(key, sum);
      }
      sum.turns++;
      const t = sum.tokens;
      t[0]! += turn.tokens.uncached;
      t[1]! += turn.tokens.read;
      t[2]! += turn.tokens.write;
      t[3]! += turn.tokens.output;
    }
    for (const { base, state, turns, tokens } of sums.values()) {
      // Turns first: they rank the models that get series of their own (telemetry/top-models.ts).
      c.inc('turns', { ...base, state }, turns);
      TOKEN_KINDS.forEach((kind, i) => c.inc('tokens', { ...base, kind }, tokens[i]!));
    }
    for (const entry of result.breaks) {
      const { project, record } = entry;
      const labels = { project, model: record.model ?? '', provider: record.provider ?? '', reason: record.reason };
      c.inc('breaks', labels);
      c.inc('missed', labels, record.missedCacheReadTokens);
      // An unknown price is counted apart, never as $0.
      if (record.estimatedExtraCostUsd === null) c.inc('unpriced', labels);
      else c.inc('cost', labels, record.estimatedExtraCostUsd);
      this.log.warn('prompt_cache_break', { project, ...breakFields(record) });
      for (const subscriber of this.subscribers) subscriber(entry);
    }
    for (const entry of result.externalBreaks ?? []) {
      this.log.info('harness_prompt_cache_break', { project: entry.project, ...externalBreakFields(entry.record) });
      for (const subscriber of this.externalSubscribers) subscriber(entry);
    }
    // A late event (a snapshot after its usage) can refine a break already reported.
    for (const entry of result.revisedBreaks) {
      this.log.info('prompt_cache_break_revised', { project: entry.project, ...breakFields(entry.record) });
      for (const subscriber of this.revisionSubscribers) subscriber(entry);
    }
  }
}

function hasExtras(extras: Pick<IngestBatch, 'tokenPoints' | 'externalBreaks' | 'checkpoint'>): boolean {
  return (extras.tokenPoints?.length ?? 0) > 0 || (extras.externalBreaks?.length ?? 0) > 0 || extras.checkpoint !== undefined;
}

function addCounts(a: BatchCounts, b: BatchCounts): BatchCounts {
  const sum: BatchCounts = { accepted: a.accepted + b.accepted, duplicates: a.duplicates + b.duplicates };
  const rejected = [...(a.rejected ?? []), ...(b.rejected ?? [])];
  if (rejected.length > 0) sum.rejected = rejected;
  if (a.externalBreaks !== undefined || b.externalBreaks !== undefined) sum.externalBreaks = (a.externalBreaks ?? 0) + (b.externalBreaks ?? 0);
  return sum;
}
