// State that outlives one OTLP request: the halves of a join that arrived
// first, waiting for the other half, which may come in a later request. Every
// table is bounded in entries and age, so a half that never finds its partner
// (a failed request has no response body) cannot make memory grow. A join
// is undone when the write of its events fails, so that the client's retry
// of the same request finds the half it needs again.
import type { SnapshotContent } from '../../../core/types.js';
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

/** A call whose usage was mapped, waiting for the record that carries its prefix but names it only by session and time. */
export interface KnownCall {
  requestId: string;
  sessionId: string;
  agentId: string;
  provider: string;
  model?: string | undefined;
  startMs: number;
}

/** The prefix of a call whose usage record has not arrived yet. */
export interface WaitingPrefix {
  prefix: Omit<SnapshotContent, 'model'>;
  model?: string | undefined;
}

export interface MappingContext {
  /** Claude Code `api_request_body` snapshots by session + request_body_id, until `api_response_body` names the request id. */
  readonly claudeBodies: Pending<PendingSnapshot>;
  /** Claude Code request ids by session + request_body_id, when the response body came first. */
  readonly claudeRequestIds: Pending<string>;
  /** Gemini CLI `api_response` calls by session + event.timestamp, for the GenAI details record of the same call. */
  readonly geminiCalls: Pending<KnownCall>;
  /** Gemini CLI GenAI details prefixes by session + event.timestamp, when they came before their `api_response`. */
  readonly geminiPrefixes: Pending<WaitingPrefix>;
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
    geminiCalls: table(),
    geminiPrefixes: table(),
    sessionModels: table(),
    limits: options.limits ?? DEFAULT_LIMITS,
    joined() {
      const taken = undo.splice(0);
      return () => taken.forEach((putBack) => putBack());
    },
  };
}
