// State that outlives one OTLP request: the halves of a join that arrived
// first, waiting for the other half, which may come in a later request. Every
// table is bounded in entries and age, so a half that never finds its partner
// (a failed request has no response body) cannot make memory grow. A join
// is undone when the write of its events fails, so that the client's retry
// of the same request finds the half it needs again.
import type { SnapshotContent } from '../../../core/types.js';
import type { SnapshotPlace } from './events.js';
import type { Prefix } from './prefix.js';
import { DEFAULT_LIMITS, type Limits } from '../../limits.js';

export interface ContextOptions {
  /** Entries per table; the oldest goes first. Default 10,000. */
  capacity?: number;
  /** How long a half waits for its partner. Default 1 h. */
  maxAgeMs?: number;
  /** Injected clock (epoch ms). */
  now?: () => number;
  /** Limits that cachebreak's own events (native records) are validated against. */
  limits?: Limits;
}

/** A bounded map whose entries expire: insertion order is age order, so the oldest is always first. */
export class Pending<V> {
  private readonly entries = new Map<string, { value: V; at: number }>();

  constructor(
    private readonly capacity: number,
    private readonly maxAgeMs: number,
    private readonly now: () => number,
    /** Where each take leaves the way to put its value back. */
    private readonly undo: (() => void)[],
  ) {}

  get size(): number {
    this.expire();
    return this.entries.size;
  }

  set(key: string, value: V): void {
    this.entries.delete(key);
    this.entries.set(key, { value, at: this.now() });
    this.expire();
    if (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value!);
  }

  /** The value, removed: a join uses each half once. */
  take(key: string): V | undefined {
    this.expire();
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    this.entries.delete(key);
    this.undo.push(() => this.set(key, entry.value));
    return entry.value;
  }

  peek(key: string): V | undefined {
    this.expire();
    return this.entries.get(key)?.value;
  }

  private expire(): void {
    const oldest = this.now() - this.maxAgeMs;
    for (const [key, entry] of this.entries) {
      if (entry.at > oldest) break;
      this.entries.delete(key);
    }
  }
}

/** A snapshot built from a request body (hashes only), waiting for its request id. */
export interface PendingSnapshot {
  snapshot: SnapshotContent;
  sessionId: string;
  agentId: string;
  provider: string;
  /** Request start. */
  ts: number;
}

/** A call whose usage was mapped, waiting for the records that carry its prefix but name it only by stream and time. */
export interface KnownCall {
  requestId: string;
  sessionId: string;
  agentId: string;
  provider: string;
  model?: string | undefined;
  startMs: number;
}

/** The request-side record of a call (its messages, the span it was made in), waiting for the call's usage record. */
export interface RequestHalf {
  /** What identifies the record, so that a retried export does not add it twice. */
  id: string;
  messageHashes?: string[] | undefined;
  /** trace id + span id of the span the request was made in. */
  spanKey?: string | undefined;
}

/** A half that pairs with the other half of its stream that started closest to it. */
export interface Timed<T> {
  at: number;
  id: string;
  value: T;
}

/** What is known of a call's prefix so far, from several records; emitted whole each time a part is added. */
export interface SnapshotParts {
  place?: (SnapshotPlace & { model: string }) | undefined;
  prefix: Prefix;
}

export interface MappingContext {
  /** Claude Code `api_request_body` snapshots by session + request_body_id, until `api_response_body` names the request id. */
  readonly claudeBodies: Pending<PendingSnapshot>;
  /** Claude Code request ids by session + request_body_id, when the response body came first. */
  readonly claudeRequestIds: Pending<string>;
  /** `api_request` records (Gemini CLI, Qwen Code) by stream, waiting for the `api_response` of the same call. */
  readonly requestHalves: Pending<Timed<RequestHalf>[]>;
  /** `api_response` calls by stream, when they came before their `api_request`. */
  readonly responseHalves: Pending<Timed<KnownCall>[]>;
  /** Gemini CLI `llm_call` span prefixes by trace + span id, until the call made in that span is known. */
  readonly spanPrefixes: Pending<Prefix>;
  /** Request ids by trace + span id, when the call was known before its `llm_call` span. */
  readonly spanCalls: Pending<string>;
  /** Each call's prefix parts by request id, so that a part arriving later completes the snapshot. */
  readonly snapshotParts: Pending<SnapshotParts>;
  /**
   * The model of each session's latest main-stream call, to label a
   * compaction record that names none (Qwen Code, Gemini CLI). Not a join:
   * a marker mapped before any call of its session says "unknown".
   */
  readonly sessionModels: Pending<string>;
  readonly limits: Limits;
  /**
   * Ends a mapping: returns what puts back every half it took, for when its
   * events cannot be written. Mapping is synchronous, so one mapping's takes
   * are never mixed with another's.
   */
  joined(): () => void;
}

export function createMappingContext(options: ContextOptions = {}): MappingContext {
  const capacity = options.capacity ?? 10_000;
  const maxAgeMs = options.maxAgeMs ?? 60 * 60_000;
  const now = options.now ?? Date.now;
  const undo: (() => void)[] = [];
  const table = <V>() => new Pending<V>(capacity, maxAgeMs, now, undo);
  return {
    claudeBodies: table(),
    claudeRequestIds: table(),
    requestHalves: table(),
    responseHalves: table(),
    spanPrefixes: table(),
    spanCalls: table(),
    snapshotParts: table(),
    sessionModels: table(),
    limits: options.limits ?? DEFAULT_LIMITS,
    joined() {
      const taken = undo.splice(0);
      return () => taken.forEach((putBack) => putBack());
    },
  };
}
