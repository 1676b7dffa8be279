// State that outlives one OTLP request: the halves of a join that arrived
// first, waiting for the other half, which may come in a later request (the
// OTLP receiver keeps those of joins that may complete at another process in
// the store instead: halves.ts). Every
// table is bounded in entries and age, and the tables of a context together in
// bytes, so a half that never finds its partner (a failed request has no
// response body), or many large ones, cannot make memory grow. A join is
// undone when the write of its events fails, so that the client's retry of
// the same request finds the half it needs again.
import type { SnapshotContent } from '../../../core/types.js';
import type { SnapshotPlace } from './events.js';
import type { Prefix } from './prefix.js';
import { DEFAULT_LIMITS, type Limits } from '../../limits.js';
import { footprint } from './footprint.js';

/** What the halves of one project may hold together, by default. */
export const DEFAULT_WAITING_BYTES = 32 * 1024 ** 2;

/** How long a half waits for its partner, by default. */
export const MAX_WAIT_MS = 60 * 60_000;

/** Why a half was dropped before its partner came and before its age ran out. */
export type EvictionReason = 'entries' | 'bytes';

export interface ContextOptions {
  /** Entries per table; the oldest goes first. Default 10,000. */
  capacity?: number;
  /** Bytes (estimated) of all tables together; the oldest half of any table goes first. Default DEFAULT_WAITING_BYTES. */
  maxBytes?: number;
  /** How long a half waits for its partner. Default 1 h. */
  maxAgeMs?: number;
  /** Injected clock (epoch ms). */
  now?: () => number;
  /** Limits that cachebreak's own events (native records) are validated against. */
  limits?: Limits;
  /** Told of every half dropped to stay within capacity or maxBytes, with its table's name. */
  evicted?: (table: string, reason: EvictionReason) => void;
  /**
   * Whether the halves of joins that may complete at another process (halves.ts)
   * are left to the caller to pair through the store (Mapped.halves), rather than
   * in this context's tables. Default false.
   */
  halvesInStore?: boolean;
}

/** What the tables of one context share: the clock, the undo list and the byte budget. */
interface Shared {
  capacity: number;
  maxAgeMs: number;
  maxBytes: number;
  now: () => number;
  /** Where each take leaves the way to put its value back. */
  undo: (() => void)[];
  evicted: (table: string, reason: EvictionReason) => void;
  tables: Pending<unknown>[];
  /** Bytes held by all tables. */
  bytes: number;
}

interface Entry<V> {
  value: V;
  at: number;
  bytes: number;
}

/** A bounded map whose entries expire: insertion order is age order, so the oldest is always first. */
export class Pending<V> {
  private readonly entries = new Map<string, Entry<V>>();

  constructor(
    /** Names the table in the eviction count. */
    readonly name: string,
    private readonly shared: Shared,
  ) {
    shared.tables.push(this as Pending<unknown>);
  }

  get size(): number {
    this.expire();
    return this.entries.size;
  }

  set(key: string, value: V): void {
    const shared = this.shared;
    this.remove(key);
    this.expire();
    const bytes = footprint(key) + footprint(value);
    // Kept, it would push out every other half and still not fit.
    if (bytes > shared.maxBytes) return shared.evicted(this.name, 'bytes');
    this.entries.set(key, { value, at: shared.now(), bytes });
    shared.bytes += bytes;
    if (this.entries.size > shared.capacity) this.evictOldest('entries');
    while (shared.bytes > shared.maxBytes) oldestTable(shared.tables)!.evictOldest('bytes');
  }

  /** The value, removed: a join uses each half once. */
  take(key: string): V | undefined {
    this.expire();
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    this.remove(key);
    this.shared.undo.push(() => this.set(key, entry.value));
    return entry.value;
  }

  peek(key: string): V | undefined {
    this.expire();
    return this.entries.get(key)?.value;
  }

  /** When the oldest entry came, if any. */
  get oldestAt(): number | undefined {
    return this.entries.values().next().value?.at;
  }

  evictOldest(reason: EvictionReason): void {
    const key = this.entries.keys().next().value;
    if (key === undefined) return;
    this.remove(key);
    this.shared.evicted(this.name, reason);
  }

  private remove(key: string): void {
    const entry = this.entries.get(key);
    if (entry === undefined) return;
    this.entries.delete(key);
    this.shared.bytes -= entry.bytes;
  }

  private expire(): void {
    const oldest = this.shared.now() - this.shared.maxAgeMs;
    for (const [key, entry] of this.entries) {
      if (entry.at > oldest) break;
      this.remove(key);
    }
  }
}

/** The table whose oldest entry is the oldest of all. */
function oldestTable(tables: readonly Pending<unknown>[]): Pending<unknown> | undefined {
  let found: Pending<unknown> | undefined;
  for (const table of tables) {
    const at = table.oldestAt;
    if (at !== undefined && (found === undefined || at < found.oldestAt!)) found = table;
  }
  return found;
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

/** What a harness's log records know of a call (its place, its message hashes), waiting for the span that carries the rest of its prefix. */
export interface CallPart {
  place: SnapshotPlace & { model: string };
  prefix: Prefix;
}

export interface MappingContext {
  /** See ContextOptions.halvesInStore. */
  readonly halvesInStore: boolean;
  /** Claude Code `api_request_body` snapshots by session + request_body_id, until `api_response_body` names the request id (unless halvesInStore). */
  readonly claudeBodies: Pending<PendingSnapshot>;
  /** Claude Code request ids by session + request_body_id, when the response body came first (unless halvesInStore). */
  readonly claudeRequestIds: Pending<string>;
  /** `api_request` records (Gemini CLI, Qwen Code) by stream, waiting for the `api_response` of the same call (unless halvesInStore). */
  readonly requestHalves: Pending<Timed<RequestHalf>[]>;
  /** `api_response` calls by stream, when they came before their `api_request` (unless halvesInStore). */
  readonly responseHalves: Pending<Timed<KnownCall>[]>;
  /**
   * Response ids ('' when the record names none) that the Gemini CLI details
   * records of the export being mapped name, by session + event.timestamp:
   * filled before its records are mapped (Source.beforeLogs), replaced by
   * the next export's.
   */
  readonly exportResponseIds: Map<string, string>;
  /** Span prefixes (Gemini CLI `llm_call`, Qwen Code `llm_request`) by span join key, until the call is known (unless halvesInStore). */
  readonly spanPrefixes: Pending<Prefix>;
  /** Calls known from log records by span join key, until their span comes (unless halvesInStore). */
  readonly spanCalls: Pending<CallPart>;
  /**
   * The model of each session's latest main-stream call, to label a
   * compaction record that names none (Qwen Code, Gemini CLI). Not a join:
   * a marker mapped before any call of its session says "unknown".
   */
  readonly sessionModels: Pending<string>;
  readonly limits: Limits;
  /** Bytes (estimated) that the waiting halves of all tables hold. */
  readonly waitingBytes: number;
  /**
   * Ends a mapping: returns what puts back every half it took, for when its
   * events cannot be written. Mapping is synchronous, so one mapping's takes
   * are never mixed with another's.
   */
  joined(): () => void;
}

export function createMappingContext(options: ContextOptions = {}): MappingContext {
  const shared: Shared = {
    capacity: options.capacity ?? 10_000,
    maxAgeMs: options.maxAgeMs ?? MAX_WAIT_MS,
    maxBytes: options.maxBytes ?? DEFAULT_WAITING_BYTES,
    now: options.now ?? Date.now,
    undo: [],
    evicted: options.evicted ?? (() => {}),
    tables: [],
    bytes: 0,
  };
  const table = <V>(name: string) => new Pending<V>(name, shared);
  return {
    halvesInStore: options.halvesInStore ?? false,
    claudeBodies: table('claude_request_bodies'),
    claudeRequestIds: table('claude_request_ids'),
    requestHalves: table('request_halves'),
    responseHalves: table('response_halves'),
    exportResponseIds: new Map(),
    spanPrefixes: table('span_prefixes'),
    spanCalls: table('span_calls'),
    sessionModels: table('session_models'),
    limits: options.limits ?? DEFAULT_LIMITS,
    get waitingBytes() {
      return shared.bytes;
    },
    joined() {
      const taken = shared.undo.splice(0);
      return () => taken.forEach((putBack) => putBack());
    },
  };
}
