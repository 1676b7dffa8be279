// The one way in: every receiver hands its domain events to `ingest`, which
// stores them (joining, de-duplicating and re-evaluating in the store), counts
// them, and announces each new break to the log and to subscribers.
import type { BreakRecord, CacheEvent } from '../core/types.js';
import { CachebreakError } from '../errors.js';
import type { Store, WriteResult } from '../store/store.js';
import { breakFields } from '../telemetry/break-line.js';
import type { Counters } from '../telemetry/counters.js';
import type { Logger } from '../telemetry/logfmt.js';

export type Receiver = 'http' | 'otlp_http' | 'otlp_grpc' | 'tail' | 'import' | 'demo';

export type BreakSubscriber = (record: BreakRecord, project: string) => void;

/** SQLite result codes that mean "try again later", not "bad input". */
const RETRYABLE = /^SQLITE_(BUSY|LOCKED|FULL|READONLY|IOERR|CANTOPEN|NOMEM)/;

export class Pipeline {
  private readonly subscribers: BreakSubscriber[] = [];

  constructor(
    private readonly store: Store,
    private readonly counters: Counters,
    private readonly log: Logger,
  ) {}

  subscribe(subscriber: BreakSubscriber): void {
    this.subscribers.push(subscriber);
  }

  /** Counts events a receiver could not decode; they never reach the store. */
  rejected(receiver: Receiver, count: number): void {
    this.counters.inc('events', { receiver, outcome: 'rejected' }, count);
  }

  async ingest(project: string, events: readonly CacheEvent[], receiver: Receiver): Promise<WriteResult> {
    if (events.length === 0) return { accepted: 0, duplicates: 0, breaks: [], revisedBreaks: [], observed: [] };
    let result: WriteResult;
    try {
      result = await this.store.ingest(project, events);
    } catch (error) {
      const code = String((error as { code?: unknown }).code ?? '');
      if (!RETRYABLE.test(code)) throw error;
      this.log.error('store_unavailable', { code, message: (error as Error).message });
      throw new CachebreakError(
        'unavailable',
        `the database cannot take writes right now (${code}); nothing from this request was stored`,
        'retry later; if it persists, check free disk space and that the database file is writable',
        { retryAfter: 5, cause: error },
      );
    }
    this.count(project, receiver, result);
    for (const record of result.breaks) {
      this.log.warn('prompt_cache_break', { project, ...breakFields(record) });
      for (const subscriber of this.subscribers) subscriber(record, project);
    }
    // A late event (a snapshot after its usage) can refine a break already reported.
    for (const record of result.revisedBreaks) this.log.info('prompt_cache_break_revised', { project, ...breakFields(record) });
    return result;
  }

  private count(project: string, receiver: Receiver, result: WriteResult): void {
    const c = this.counters;
    c.inc('events', { receiver, outcome: 'accepted' }, result.accepted);
    c.inc('events', { receiver, outcome: 'duplicate' }, result.duplicates);
    for (const turn of result.observed) {
      const base = { project, model: turn.model, provider: turn.provider };
      c.inc('tokens', { ...base, kind: 'uncached_input' }, turn.tokens.uncached);
      c.inc('tokens', { ...base, kind: 'cache_read' }, turn.tokens.read);
      c.inc('tokens', { ...base, kind: 'cache_write' }, turn.tokens.write);
      c.inc('tokens', { ...base, kind: 'output' }, turn.tokens.output);
      c.inc('turns', { ...base, state: turn.state });
    }
    for (const record of result.breaks) {
      const labels = { project, model: record.model ?? '', provider: record.provider ?? '', reason: record.reason };
      c.inc('breaks', labels);
      c.inc('missed', labels, record.missedCacheReadTokens);
      c.inc('cost', labels, record.estimatedExtraCostUsd ?? 0);
    }
  }
}
