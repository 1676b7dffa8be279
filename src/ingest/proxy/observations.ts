// Storing what the proxy observed, off the call path: a proxied call is
// answered before its event is even queued, and the queue is bounded. A few
// workers hand the pipeline what is queued, each time all of it a project at
// once, so that calls made together cost one write, not one each: an event
// waits up to LINGER_MS for others (or until a batch is full) before a worker
// takes it, as a batch processor does. A database that is slow,
// locked or down holds the workers, not the calls: the queue fills, and each
// event that finds it full is counted (queue_full) and dropped, as is each
// event whose write failed (store_failed) or that the store refused for what
// it is (rejected: a request id of another session). Closing waits a bounded
// time for what is queued; what is left is counted (shutdown).
import type { CacheEvent } from '../../core/types.js';
import type { EventRejection } from '../../store/store.js';
import type { Pipeline } from '../pipeline.js';

/** Events waiting to be stored, past which new ones are dropped: about a second of calls at full speed. */
export const OBSERVATION_QUEUE_LIMIT = 256;
/** Batches handed to the pipeline at once. */
const WORKERS = 2;
/** The most events a worker takes at a time. */
export const OBSERVATION_BATCH = 64;
/** Events held at most: waiting, and taken by the workers. */
export const OBSERVATIONS_HELD = OBSERVATION_QUEUE_LIMIT + WORKERS * OBSERVATION_BATCH;
/**
 * How long an event waits for others to be written with it. A write holds
 * the main thread the calls' bytes pass through: fewer writes, made a little
 * after the answers they follow, hold up fewer chunks (the median a
 * model-like call gains through the proxy fell from 0.8 to 0.3–0.5 ms). A
 * turn stored this much later changes nothing for its call, long answered.
 */
export const LINGER_MS = 20;
/** How long closing waits for queued events before counting them as not stored. */
export const OBSERVATION_DRAIN_MS = 5_000;

export interface Observed {
  project: string;
  provider: string;
  event: CacheEvent;
  /** Whether the event carries usage (a turn) or is a snapshot alone. */
  withUsage: boolean;
}

export type ObservationOutcome = 'turn' | 'snapshot_only' | 'rejected' | 'store_failed' | 'queue_full' | 'shutdown';

/** What the queue tells of each event: its outcome, and why a write failed or the store refused it. */
export interface ObservationHooks {
  count(observed: Observed, outcome: ObservationOutcome): void;
  storeFailed(observed: Observed, error: unknown): void;
  rejected(observed: Observed, rejection: EventRejection): void;
}

export class ObservationQueue {
  private readonly waiting: Observed[] = [];
  private working = 0;
  private closed = false;
  /** Batches the workers have taken and not yet stored. */
  private readonly taken = new Set<readonly Observed[]>();
  /** Closing stopped waiting: what the workers still hold was counted as shutdown, and a late result is not counted again. */
  private abandoned = false;
  private drained: (() => void) | undefined;
  /** Set while queued events linger before a worker takes them. */
  private lingering: NodeJS.Timeout | undefined;

  constructor(
    private readonly pipeline: Pipeline,
    private readonly hooks: ObservationHooks,
  ) {}

  /** Queues an event to store; counted as dropped when the queue is full or closed. Never waits. */
  offer(observed: Observed): void {
    if (this.closed) {
      this.hooks.count(observed, 'shutdown');
      return;
    }
    if (this.waiting.length >= OBSERVATION_QUEUE_LIMIT) {
      this.hooks.count(observed, 'queue_full');
      return;
    }
    this.waiting.push(observed);
    if (this.waiting.length >= OBSERVATION_BATCH) this.start();
    else if (this.working === 0) this.lingering ??= setTimeout(() => this.start(), LINGER_MS).unref();
  }

  /** Sets workers on what is queued: as many as there are batches of it, up to WORKERS. */
  private start(): void {
    clearTimeout(this.lingering);
    this.lingering = undefined;
    while (this.working < WORKERS && this.working * OBSERVATION_BATCH < this.waiting.length) {
      this.working++;
      void this.work();
    }
  }

  /** Takes no more; waits up to `waitMs` for what is queued and being stored, then counts the rest as not stored. */
  async close(waitMs: number = OBSERVATION_DRAIN_MS): Promise<void> {
    this.closed = true;
    // What lingers is written now.
    this.start();
    if (this.working > 0) {
      let timer: NodeJS.Timeout | undefined;
      await new Promise<void>((resolve) => {
        this.drained = resolve;
        timer = setTimeout(resolve, waitMs);
      });
      clearTimeout(timer);
    }
    this.abandoned = true;
    for (const batch of this.taken) for (const observed of batch) this.hooks.count(observed, 'shutdown');
    for (const observed of this.waiting.splice(0)) this.hooks.count(observed, 'shutdown');
  }

  private async work(): Promise<void> {
    while (this.waiting.length > 0) {
      const taken = this.waiting.splice(0, OBSERVATION_BATCH);
      const byProject = new Map<string, Observed[]>();
      for (const observed of taken) byProject.set(observed.project, [...(byProject.get(observed.project) ?? []), observed]);
      for (const [project, batch] of byProject) await this.store(project, batch);
    }
    this.working--;
    if (this.working === 0) this.drained?.();
  }

  private async store(project: string, batch: readonly Observed[]): Promise<void> {
    this.taken.add(batch);
    try {
      const counts = await this.pipeline.ingest(project, batch.map((o) => o.event), 'proxy');
      if (!this.taken.delete(batch) || this.abandoned) return;
      const rejections = new Map((counts.rejected ?? []).map((r) => [r.event, r]));
      batch.forEach((observed, i) => {
        const rejection = rejections.get(i);
        if (rejection) {
          this.hooks.count(observed, 'rejected');
          this.hooks.rejected(observed, rejection);
        } else {
          this.hooks.count(observed, observed.withUsage ? 'turn' : 'snapshot_only');
        }
      });
    } catch (error) {
      if (!this.taken.delete(batch) || this.abandoned) return;
      for (const observed of batch) {
        this.hooks.count(observed, 'store_failed');
        this.hooks.storeFailed(observed, error);
      }
    }
  }
}
