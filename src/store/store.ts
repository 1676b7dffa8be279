// The one interface through which everything reaches stored data. Every call
// is async so that another backend (PostgreSQL) can implement it unchanged.
import type { BreakCause, BreakReason, BreakRecord, CacheEvent, Prefix, TurnState } from '../core/types.js';
import type { GapRow } from '../core/insights/ttl.js';
import type { StreamSnapshot } from '../core/insights/chronic.js';
import type { ColdTurn } from '../core/insights/fanout.js';

/** [from, to) in epoch ms; either end may be open. */
export interface TimeRange {
  from?: number;
  to?: number;
}

/** Each filter matches any of its values; an absent filter matches everything. */
export interface Filters {
  sessionId?: string[];
  agentId?: string[];
  model?: string[];
  provider?: string[];
  reason?: string[];
}

/** What the breaks explorer filters on beside the common filters. */
export interface BreakFilters extends Filters {
  /** A BreakCause, or 'none' for breaks with no cause. */
  cause?: string[];
  /** Breaks whose changedToolNames name any of these tools. */
  toolName?: string[];
}

/** recent: newest first; extra_cost: most extra cost first, unpriced last. */
export type BreakOrder = 'recent' | 'extra_cost';

export interface PageQuery {
  limit: number;
  cursor?: string;
}

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

/** One point of a token counter that a harness exports as a metric. */
export interface TokenPoint {
  /** Identity of the series (same metric, source and attributes = same series). */
  series: string;
  /** e.g. claude_code, gemini_cli, qwen-code, gen_ai */
  source: string;
  model: string;
  /** input, output, cache_read, cache_write, thought, tool… */
  kind: string;
  temporality: 'delta' | 'cumulative';
  startMs: number;
  timeMs: number;
  value: number;
}

/** Where `tail` is in one followed file (see tailCheckpoints in schema.ts). */
export interface TailCheckpoint {
  /** "<device>:<inode>". */
  fileId: string;
  path: string;
  /** Everything before this byte is stored. */
  offset: number;
  /** Where reading restarts (≤ offset); what lies before offset is only read again, never stored again. */
  resumeAt: number;
  resumeLine: number;
  headLength: number;
  headHash: string;
}

/** A break a harness reported itself, its reason text verbatim. */
export interface ExternalBreak {
  harness: string;
  sessionId: string;
  agentId: string;
  source: string;
  ts: number;
  reason: string;
  callNumber: number | null;
  previousCacheReadTokens: number | null;
  currentCacheReadTokens: number | null;
  cacheCreationTokens: number | null;
  diffPath: string | null;
  /** Where it was read, when read from a file. */
  file: string | null;
  line: number | null;
}

export interface ExternalBreakFilters {
  sessionId?: string[];
  agentId?: string[];
}

/** One request's events (and token counters), for one project. */
export interface IngestBatch {
  project: string;
  events: readonly CacheEvent[];
  tokenPoints?: readonly TokenPoint[];
  externalBreaks?: readonly ExternalBreak[];
  /** Written in the same transaction as the rest of the batch: what it covers is stored exactly once. */
  checkpoint?: TailCheckpoint;
}

/** An event not stored (over a limit, or refused by the store); the rest of its batch was stored. */
export interface EventRejection {
  /** Its index in the batch's events. */
  event: number;
  field: string;
  problem: string;
}

export interface BatchCounts {
  accepted: number;
  duplicates: number;
  /** Events refused while storing (a request id of another session, a write that failed for that event alone). */
  rejected?: EventRejection[];
  /** Harness-reported breaks newly stored (the others were known); absent when the batch had none. */
  externalBreaks?: number;
}

export interface ProjectBreak {
  project: string;
  record: BreakRecord;
}

/** A turn that got its first state in a write: what Prometheus counters count. */
export interface ObservedTurn {
  model: string;
  provider: string;
  state: TurnState;
  tokens: TokenTotals;
}

/**
 * Everything the rollups hold for one (project, model, provider, state,
 * reason): what the Prometheus counters start from, so that /metrics shows
 * the stored totals after a restart, an import or a demo.
 */
export interface StoredCounts {
  project: string;
  model: string;
  provider: string;
  state: TurnState;
  /** Break reason, or '' for turns that are not breaks. */
  reason: string;
  turns: number;
  /** Counted as the counters count them: ObservedTurn's tokens. */
  tokens: Omit<TokenTotals, 'write1h'>;
  breaks: number;
  missed: number;
  /** Of the priced breaks. */
  extraCostUsd: number;
  unpriced: number;
}

export interface WriteResult {
  /** Per batch, in the order given. */
  counts: BatchCounts[];
  /** Turns that became breaks in this write. */
  breaks: ProjectBreak[];
  /** Breaks whose record a late event changed (e.g. the snapshot arrived after the usage). */
  revisedBreaks: ProjectBreak[];
  /** Turns evaluated for the first time. */
  observed: (ObservedTurn & { project: string })[];
  /** Harness-reported breaks stored for the first time. */
  externalBreaks?: { project: string; record: ExternalBreak }[];
}

/**
 * Token sums. Beside a cache rate (sessions, stats, totals), uncached, read
 * and write are the rate's own population (SPEC §5), `uncached + read +
 * write` its denominator: turns whose usage reported no cache field are left
 * out (their input is served apart, as `unreportedInputTokens`); output
 * counts every turn.
 */
export interface TokenTotals {
  uncached: number;
  read: number;
  write: number;
  write1h: number;
  output: number;
}

/**
 * What breaks cost, over rows that sum several of them (SPEC §4.10): an
 * unknown price is never counted as $0.
 */
export interface CostTotals {
  /**
   * The sum over the breaks whose model has a known price; null when there
   * are breaks and none of them has one (there is no basis for a figure).
   */
  estimatedExtraCostUsd: number | null;
  /** Breaks whose model has no known price: not in estimatedExtraCostUsd. */
  unpricedBreaks: number;
}

/** Token sums beside a cache rate, and the input the rate leaves out (SPEC §5). */
export interface RateTokens {
  /** read / (uncached + read + write) of these is the cache rate. */
  tokens: TokenTotals;
  /** Input of turns whose usage reported no cache field (state `unreported`): outside the rate. */
  unreportedInputTokens: number;
}

export interface SessionSummary extends CostTotals, RateTokens {
  sessionId: string;
  agentIds: string[];
  firstSeen: number;
  lastSeen: number;
  turns: number;
  breaks: number;
  /** null: no turn reported cache usage. */
  cacheRate: number | null;
  missedCacheReadTokens: number;
}

export interface TurnView {
  requestId: string;
  agentId: string;
  ts: number;
  endTs: number | null;
  ttftMs: number | null;
  provider: string | null;
  model: string | null;
  /** null: no usage has arrived for this request yet. */
  state: TurnState | null;
  usage: (TokenTotals & { cacheReported: boolean }) | null;
  expectMiss: string | null;
  /** The baseline (SPEC §4.2): the earlier turn whose cache this one could read; null without one. */
  previousRequestId: string | null;
  /** Earlier turns of the stream not yet answering when this one started. */
  concurrentRequestIds: string[];
  break: BreakRecord | null;
}

export interface BreakPrefixes {
  break: BreakRecord;
  /** The baseline's prefix: message hashes aside, with its markers. */
  baseline: Prefix | null;
  turn: Prefix | null;
}

export type GroupBy = 'model' | 'provider' | 'agentId' | 'reason' | 'state';

/** recent: last seen first; worst_cache_rate: lowest rate first; extra_cost: most extra cost first. */
export type SessionOrder = 'recent' | 'worst_cache_rate' | 'extra_cost';

export interface ChangedTool {
  name: string;
  /** Breaks that named this tool in changedToolNames. */
  breaks: number;
}

export interface StatsQuery extends TimeRange {
  /** Bucket width, a whole number of minutes. */
  intervalMs: number;
  groupBy?: GroupBy;
  filters: Filters;
}

export interface StatsRow extends CostTotals, RateTokens {
  ts: number;
  /** Tokens the harnesses reported as metrics in this bucket, by kind (no turns behind them). */
  reportedTokens?: Record<string, number>;
  /** The value of the groupBy dimension ('' when unknown or, for reason, not a break). */
  group?: string;
  turns: number;
  breaks: number;
  cacheRate: number | null;
  missedCacheReadTokens: number;
}

export interface TotalsQuery extends TimeRange {
  groupBy?: GroupBy;
  filters: Filters;
}

export type TotalsRow = Omit<StatsRow, 'ts' | 'reportedTokens'>;

export interface BreakCauseRow extends CostTotals {
  reason: BreakReason;
  cause: BreakCause | null;
  breaks: number;
  missedCacheReadTokens: number;
}

/** Usage records that no stream holds yet: no snapshot or session named where they belong (SPEC §4.11). */
export interface WaitingUsage {
  project: string;
  /** Stored and counted, out of every other figure, until they join a turn or retention deletes them. */
  waiting: number;
}

export interface PruneOptions {
  /** Delete turns (and their breaks) that started before this time. */
  turnsBefore?: number;
  /** Delete rollups, reported tokens and emptied sessions from before this time. */
  rollupsBefore?: number;
}

export interface ReevaluationResult {
  streams: number;
  /** Breaks found, changed or gone. */
  breaksChanged: number;
}

export interface PruneResult {
  turns: number;
  rollups: number;
}

export const SCOPES = ['ingest', 'read', 'admin'] as const;
export type Scope = (typeof SCOPES)[number];

/**
 * Whether API keys lock the database's server: `none` (no key was ever
 * created), `active` (at least one key works) or `revoked` (keys were
 * created, and every one is revoked).
 */
export type KeyState = 'none' | 'active' | 'revoked';

export interface ApiKey {
  id: number;
  project: string;
  prefix: string;
  scopes: Scope[];
  name: string | null;
  createdMs: number;
  revokedMs: number | null;
}

/** A stream (session and agent) with its running sums, over its whole life. */
export interface StreamSums extends RateTokens {
  sessionId: string;
  agentId: string;
  firstSeen: number;
  lastSeen: number;
  turns: number;
  /** Turns that reported cache usage: the cache rate's population. */
  measuredTurns: number;
  breaks: number;
  /** Priced breaks' extra cost, in micro-dollars, and the unpriced ones. */
  extraCostMicroUsd: number;
  unpricedBreaks: number;
}

export type StoreErrorKind = 'data' | 'unavailable';

/**
 * One half of an OTLP join (a Claude Code request body's hashes, or the
 * request id its response body names), waiting in the store until either half
 * reaches any process: its other half is the other kind with the same key.
 */
export interface WaitingHalf {
  key: string;
  /** The table it waits in, as cachebreak_waiting_evicted_total names it. */
  kind: string;
  /** JSON of what the join needs: hashes and ids, never content. */
  value: string;
  /** What it counts against the project's bound (its estimated size in memory, ingest/otlp/sources/footprint.ts). */
  bytes: number;
  /** The keys its other half may wait under (at most 3), when not `key` alone. */
  partnerKeys?: string[];
  /** Which of the other halves waiting under them, oldest first, is its own (an index; -1 for none). Without it: the oldest. */
  choose?(waiting: readonly WaitingHalf[]): number;
}

export interface WaitBounds {
  now: number;
  /** How long a half waits for its other half. */
  maxAgeMs: number;
  /** What the waiting halves of one project may hold together: past it the oldest go. */
  maxBytes: number;
}

export interface Pairing {
  /** The other half, taken (a join uses each half once); undefined when this half waits instead. */
  other: WaitingHalf | undefined;
  /** Kinds of the halves dropped to stay within maxBytes: this one, when it alone is larger. */
  evicted: string[];
}

export interface Store {
  /** Stores several requests' events at once: all of them are durable when it resolves. */
  write(batches: readonly IngestBatch[]): Promise<WriteResult>;
  breaks(project: string, range: TimeRange, filters: BreakFilters, page: PageQuery, order?: BreakOrder): Promise<Page<BreakRecord>>;
  sessions(
    project: string,
    range: TimeRange,
    filters: Filters,
    page: PageQuery,
    order?: SessionOrder,
  ): Promise<Page<SessionSummary>>;
  /** Ids of the sessions seen in the range, most recent first: sessions() without the sums, for long lists. */
  recentSessionIds(project: string, range: TimeRange, limit: number): Promise<string[]>;
  /** The tools most often named by breaks. */
  changedTools(project: string, range: TimeRange, filters: Filters, limit: number): Promise<ChangedTool[]>;
  /** One break with the prefixes of its turn and of its baseline (null where not stored); null when no break has this request id. */
  breakPrefixes(project: string, requestId: string): Promise<BreakPrefixes | null>;
  /** null when the session is unknown. */
  sessionTurns(project: string, sessionId: string): Promise<TurnView[] | null>;
  stats(project: string, query: StatsQuery): Promise<StatsRow[]>;
  /** Sums over the whole range from the rollups, one row per group (or one row). */
  totals(project: string, query: TotalsQuery): Promise<TotalsRow[]>;
  /**
   * Turns with cache usage in the range, summed by stream (session and
   * agent), model, provider and gap bucket (core/insights/ttl.ts): what TTL advice is computed from.
   * Filters: sessionId and agentId.
   */
  gapRows(project: string, range: TimeRange, filters: Filters): Promise<GapRow[]>;
  /**
   * Streams seen in the range with at least `minTurns` turns that reported
   * cache usage and a cache rate below `maxRate` over their whole life, the
   * most input not read (uncached + write) first (core/insights/chronic.ts).
   * Filters: sessionId and agentId.
   */
  lowRateStreams(project: string, range: TimeRange, filters: Filters, minTurns: number, maxRate: number, limit: number): Promise<StreamSums[]>;
  /** A stream's newest turns, newest first, with their prefixes (message hashes only counted) and usage. */
  streamSnapshots(project: string, sessionId: string, agentId: string, limit: number): Promise<StreamSnapshot[]>;
  /**
   * Turns in state cold in the range, oldest first, at most `limit`, each
   * with its prefix key (model, tool list hash, system hash) and writes:
   * what fan-out cold starts are found in (core/insights/fanout.ts).
   * Filters: sessionId and agentId.
   */
  coldTurns(project: string, range: TimeRange, filters: Filters, limit: number): Promise<ColdTurn[]>;
  /** Breaks by reason and cause (ttl_expired, likely_server_eviction or none). */
  breakCauses(project: string, range: TimeRange, filters: Filters): Promise<BreakCauseRow[]>;
  /**
   * Usage records waiting for the snapshot or session that places them, now
   * (not over a range): for `project` alone (one row, 0 included), or for
   * every project stored when it is undefined.
   */
  waitingUsage(project?: string): Promise<WaitingUsage[]>;
  /** The rollups' sums over all time, per project, model, provider, state and reason. */
  storedCounts(): Promise<StoredCounts[]>;
  /** Stores a key by its hash (the key itself is never stored). */
  createKey(key: { project: string; hash: string; prefix: string; scopes: Scope[]; name: string | null; createdMs: number }): Promise<ApiKey>;
  /** The keys (revoked or not) with this prefix, with their hashes for a constant-time comparison. */
  keysByPrefix(prefix: string): Promise<(ApiKey & { hash: string })[]>;
  listKeys(): Promise<ApiKey[]>;
  /** Every key (revoked or not) with its hash: what a copy of the keys in memory is refreshed from. */
  keysWithHashes(): Promise<(ApiKey & { hash: string })[]>;
  /** Revokes by id or by prefix; returns the key, or undefined when none matched. */
  revokeKey(idOrPrefix: string, revokedMs: number): Promise<ApiKey | undefined>;
  /** Whether any key that is not revoked exists. */
  hasActiveKeys(): Promise<boolean>;
  /** Whether keys were ever created, and whether any still works. */
  keyState(): Promise<KeyState>;
  /** Where `tail` was in each file it followed for this project. */
  tailCheckpoints(project: string): Promise<TailCheckpoint[]>;
  /** Drops the checkpoints of files that are gone. */
  forgetTailCheckpoints(project: string, fileIds: readonly string[]): Promise<void>;
  /** Harness-reported breaks, newest first. */
  externalBreaks(project: string, range: TimeRange, filters: ExternalBreakFilters, page: PageQuery): Promise<Page<ExternalBreak>>;
  /** Retention: deletes old data in small steps that never hold writers back for long. */
  prune(options: PruneOptions): Promise<PruneResult>;
  /** Whether the stored states and breaks were computed under other rules than this version's (SPEC §4). */
  needsReevaluation(): Promise<boolean>;
  /**
   * Evaluates every stream again under this version's rules and the store's
   * detection options, in small transactions; `progress` hears of each step.
   */
  reevaluate(progress?: (done: number, total: number) => void): Promise<ReevaluationResult>;
  /**
   * In one step, takes the other half of `half`'s join when it waits, or
   * else leaves `half` waiting (the same key and kind sent again replaces it);
   * halves past their age are never paired.
   */
  pairHalf(project: string, half: WaitingHalf, bounds: WaitBounds): Promise<Pairing>;
  /** Leaves a half taken by pairHalf waiting again, without pairing it: the events of its join were not stored. */
  putBackHalf(project: string, half: WaitingHalf, bounds: WaitBounds): Promise<Pairing>;
  /** Deletes the halves of every project whose age ran out; returns how many. */
  trimHalves(now: number): Promise<number>;
  /** Cheap check that the database answers; rejects within a few seconds when it does not. */
  ping(): Promise<void>;
  /**
   * What an error this store threw says (one place per store): 'data' when
   * what it was given is refused (a constraint, a value out of range: sent
   * again, it fails again), 'unavailable' when the database cannot serve now
   * (unreachable, restarting, read-only, full, busy: later it may), and
   * undefined when neither is known. A write that did not fail for its data
   * is retried by its sender.
   */
  classifyError(error: unknown): StoreErrorKind | undefined;
  close(): Promise<void>;
}

/** A query the store cannot answer as asked (a bad cursor): the caller's mistake, not the store's. */
export class InvalidQueryError extends Error {
  constructor(
    readonly field: string,
    message: string,
    /** What to do instead, when more is known than "start again". */
    readonly hint?: string,
  ) {
    super(message);
  }
}
