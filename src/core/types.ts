// The domain model of cachebreak. Field names follow SPEC §2 (ingest) and §6
// (break record) exactly; times inside the core are epoch milliseconds.

export type EpochMs = number;

/** SPEC §4.1, in the order the states are tried. */
export const TURN_STATES = ['unreported', 'cold', 'miss', 'expected', 'hit', 'uncached'] as const;
export type TurnState = (typeof TURN_STATES)[number];

/** SPEC §4.4, in prefix order, the marker reasons last: the first change inside the cached prefix is `reason`. */
export const CHANGE_REASONS = [
  'model_changed',
  'tools_schema_changed',
  'tools_order_changed',
  'system_changed',
  'request_params_changed',
  'messages_rewritten',
  // Markers are not part of the cache key: a re-timed marker or a lookup that
  // cannot reach the cached entry never outranks a change of the content.
  'cache_control_changed',
  'breakpoint_lookback_exceeded',
] as const;
export type ChangeReason = (typeof CHANGE_REASONS)[number];

/** Every reason a break record can carry: a change, or none found. */
export const BREAK_REASONS = [...CHANGE_REASONS, 'likely_provider_ttl_or_eviction', 'unknown'] as const;
export type BreakReason = (typeof BREAK_REASONS)[number];

/** SPEC §4.5. */
export const BREAK_CAUSES = ['ttl_expired', 'possible_ttl_expiry', 'likely_server_eviction'] as const;
export type BreakCause = (typeof BREAK_CAUSES)[number];

/** Where the retention used to judge a gap came from (SPEC §4.5). */
export const TTL_SOURCES = ['declared', 'previous_1h_write', 'provider_default', 'unknown'] as const;
export type TtlSource = (typeof TTL_SOURCES)[number];

export interface ToolRef {
  name: string;
  schemaHash: string;
}

/** cache_control settings of a request, as the harness describes them. */
export interface CacheControl {
  enabled?: boolean;
  /** Duration of the longest-prefix marker, or the requested retention: "5m", "1h", "24h", "300s"… */
  ttl?: string;
  scope?: string;
  /**
   * Absolute positions (SPEC §4.6): "tools", "tools:k", "system:k",
   * "messages:i", each optionally suffixed "@5m", "@1h" or "@24h".
   */
  markers?: string[];
  /** Hash of a provider cache key (OpenAI prompt_cache_key, Gemini cachedContent). */
  key?: string;
}

/**
 * Where a request body that arrived cut (a telemetry attribute length limit)
 * was cut: inside the tool list or the message list, which then hold only
 * their complete leading entries, or elsewhere. Whatever came after the cut
 * is absent from the snapshot, so it is unknown, not empty.
 */
export const CUT_PLACES = ['tools', 'messages', 'elsewhere'] as const;
export type CutPlace = (typeof CUT_PLACES)[number];

/** What a request's cacheable prefix was. Hashes are opaque strings. */
export interface SnapshotContent {
  model: string;
  systemHash?: string;
  systemBlockHashes?: string[];
  /** In the order sent. */
  tools?: ToolRef[];
  cacheControl?: CacheControl;
  cacheControlHash?: string;
  messageHashes?: string[];
  /**
   * Content blocks per `messageHashes` entry, in order (a text, a tool_use, a
   * tool_result… each counts one): a cache lookup walks back over blocks, not
   * messages (SPEC §4.12). Absent: one block each.
   */
  messageBlockCounts?: number[];
  /**
   * A size estimate of the prefix, filled where raw content is read (a
   * request body) or sent by a client that sized it: the characters of the JSON of the tools and system, then
   * of tools, system and messages through each `messageHashes` entry (one
   * more entry than messageHashes). Sizes only, never content; what part of
   * a fan-out's write could have been shared (insights/fanout.ts).
   */
  prefixChars?: number[];
  /** Anthropic `thinking` (enabled, budget), raw or as a client hash. */
  thinking?: unknown;
  thinkingHash?: string;
  /** `tool_choice`, raw or as a client hash. */
  toolChoice?: unknown;
  toolChoiceHash?: string;
  /** Other cache-relevant request parameters, compared per key. */
  params?: Record<string, unknown>;
  /** Set when the snapshot was built from a cut body: only what it holds is compared. */
  partial?: CutPlace;
  /**
   * The request continues a conversation the provider stores (OpenAI
   * Responses `previous_response_id` or `conversation`): its messages are
   * only the new input, appended to the stored ones, so they are not the
   * prompt's messages and are not compared (nor their markers and blocks).
   */
  continuesResponse?: boolean;
}

export interface StreamKey {
  sessionId: string;
  /** Defaults to "main"; separates subagents and side queries. */
  agentId: string;
}

/**
 * Where a request came from, when the source tells: the release of the agent
 * that made it and the trace and span that telemetry gave it. Not content.
 */
export interface TurnOrigin {
  /** The agent's (harness's) version: OTLP `service.version`, a User-Agent's version. */
  agentVersion?: string;
  /** 32 lowercase hex digits (W3C trace context). */
  traceId?: string;
  /** 16 lowercase hex digits. */
  spanId?: string;
}

export const ORIGIN_KEYS = ['agentVersion', 'traceId', 'spanId'] as const;
export type OriginKey = (typeof ORIGIN_KEYS)[number];

export interface SnapshotEvent extends SnapshotContent, StreamKey, TurnOrigin {
  type: 'snapshot';
  requestId: string;
  /** Request start. */
  ts: EpochMs;
  provider?: string;
  /** The harness knowingly reset the prefix (e.g. "compaction"). */
  expectMiss?: string;
}

/** SPEC §3: every provider's usage in one shape. totalInput = uncached + read + write. */
export interface Usage {
  uncached: number;
  read: number;
  write: number;
  /** The part of `write` written with a 1h TTL. */
  write1h: number;
  output: number;
  /** False when the provider's usage carried no cache field at all ("unreported" is not 0%). */
  cacheReported: boolean;
  /**
   * The usage carried a cache-write field, even 0, or has Anthropic's or
   * Bedrock's shape: explicit caching (SPEC §4.12).
   */
  writeReported: boolean;
}

export interface UsageEvent extends TurnOrigin {
  type: 'usage';
  requestId: string;
  sessionId?: string;
  agentId?: string;
  /** Response end. */
  ts?: EpochMs;
  /** Time to first token: when the request's cache entry became readable. */
  ttftMs?: number;
  provider?: string;
  /** Lets a usage-only turn be counted per model. */
  model?: string;
  usage: Usage;
  /** Provider-side cache diagnostics (Anthropic's cache_miss_reason, OpenAI's prompt_cache_diagnostics), as sent or as read from a raw response. */
  diagnostics?: unknown;
}

/** A snapshot and its usage in one event. */
export interface TurnEvent extends Omit<SnapshotEvent, 'type'> {
  type: 'turn';
  usage: Usage;
  /** Response end. */
  endTs?: EpochMs;
  ttftMs?: number;
  diagnostics?: unknown;
}

export type CacheEvent = SnapshotEvent | UsageEvent | TurnEvent;

/** A snapshot reduced to what detection compares; derived once per snapshot. */
export interface Prefix {
  model: string;
  systemHash?: string;
  systemBlockHashes?: string[];
  tools?: ToolRef[];
  /** Aggregate of `tools` (names, hashes and order): equal lists compare in O(1). */
  toolsHash?: string;
  /**
   * Given by the client, or the hash of the cache settings that markers do
   * not describe (a cache key, caching turned on or off; scope and TTL too
   * when no marker is known).
   */
  cacheControlHash?: string;
  /** Declared TTL in ms, from cacheControl.ttl. */
  ttlMs?: number;
  /** Markers at absolute positions (SPEC §4.6), in the form "system:1@1h"; absent or empty: unknown. */
  markers?: string[];
  /** Hashes of the cache-relevant request parameters by name (thinking, toolChoice, params keys); absent: unknown. */
  params?: Record<string, string>;
  messageHashes?: string[];
  /** Content blocks per message, when some message has other than one (absent: one each). */
  messageBlockCounts?: number[];
  /** SnapshotContent.prefixChars, when it has one entry more than messageHashes. */
  prefixChars?: number[];
  /** The snapshot was built from a cut body (see CutPlace). */
  partial?: CutPlace;
}

/** One request: its snapshot and/or usage, joined on requestId. */
export interface Turn extends TurnOrigin {
  requestId: string;
  sessionId: string;
  agentId: string;
  /** Request start (the snapshot's ts), else the usage's ts. */
  ts: EpochMs;
  /** Response end, when known. */
  endTs?: EpochMs;
  /** Time to first token, when known. */
  ttftMs?: number;
  provider?: string;
  model?: string;
  prefix?: Prefix;
  expectMiss?: string;
  usage?: Usage;
  diagnostics?: unknown;
}

export interface ToolChanges {
  added: string[];
  removed: string[];
  schemaChanged: string[];
  moved: string[];
}

/** SPEC §6, the output contract. */
export interface BreakRecord {
  requestId: string;
  previousRequestId: string;
  sessionId: string;
  agentId: string;
  ts: EpochMs;
  provider: string | null;
  model: string | null;
  reason: BreakReason;
  reasons: BreakReason[];
  cause: BreakCause | null;
  changedToolNames: string[];
  toolChanges: ToolChanges;
  changedSystemBlocks: number[] | null;
  firstChangedMessageIndex: number | null;
  previousCacheReadTokens: number;
  currentCacheReadTokens: number;
  cacheWriteTokens: number;
  expectedCacheReadTokens: number;
  missedCacheReadTokens: number;
  gapMs: number;
  /** The shortest retention of the baseline's prefix; null when unknown. */
  ttlMs: number | null;
  /** The longest; null when unknown or unbounded. */
  ttlMaxMs: number | null;
  ttlSource: TtlSource;
  /** The shorter tier expired while a longer one still held part of the prefix. */
  partialExpiry: boolean;
  changedParams: string[];
  /** Reasons of changes that lie after the baseline's cached prefix: listed, not the cause. */
  changesAfterCachedPrefix: ChangeReason[];
  providerDiagnosis: unknown;
  estimatedExtraCostUsd: number | null;
  /** The agent's version that made the turn; null when unknown. */
  agentVersion: string | null;
  /** The trace telemetry gave the turn (32 hex digits); null when none. */
  traceId: string | null;
  /** Its span (16 hex digits); null when none. */
  spanId: string | null;
}

/** The outcome of detection for one turn that has usage. */
export interface Evaluation {
  requestId: string;
  state: TurnState;
  /** The baseline (SPEC §4.2), or null without one. */
  previousRequestId: string | null;
  /** Earlier turns of the stream that were not yet answering when this one started. */
  concurrentRequestIds: readonly string[];
  break: BreakRecord | null;
}
