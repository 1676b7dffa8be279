// The only schema. Times are epoch milliseconds (integers). Every row belongs
// to a project. Repeating values (labels, tool lists, prefixes) are stored once
// and referenced by id, so a turn costs a few dozen bytes.
import { sql } from 'drizzle-orm';
import { blob, index, integer, real, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';

export const projects = sqliteTable('projects', {
  id: integer().primaryKey(),
  name: text().notNull().unique(),
});

/** Models, providers and agent names. An unknown value is the empty string. */
export const labels = sqliteTable(
  'labels',
  {
    id: integer().primaryKey(),
    kind: text({ enum: ['model', 'provider', 'agent'] }).notNull(),
    value: text().notNull(),
  },
  (t) => [uniqueIndex('labels_kind_value').on(t.kind, t.value)],
);

/** A tool list in the order sent: JSON [[name, schemaHash], …], keyed by its aggregate hash. */
export const toolsets = sqliteTable('toolsets', {
  id: integer().primaryKey(),
  hash: text().notNull().unique(),
  tools: text().notNull(),
});

/** Everything of a snapshot but its message hashes, keyed by a hash of the whole. */
export const prefixes = sqliteTable('prefixes', {
  id: integer().primaryKey(),
  hash: text().notNull().unique(),
  model: text().notNull(),
  systemHash: text('system_hash'),
  systemBlockHashes: text('system_block_hashes'),
  toolsetId: integer('toolset_id'),
  cacheControlHash: text('cache_control_hash'),
  ttlMs: integer('ttl_ms'),
  /** Markers not on a message (["tools@1h","system:1@5m"]) as JSON; message markers belong to each turn. */
  markers: text(),
  /** Request parameter hashes by name, as JSON. */
  params: text(),
  /** Where the body the snapshot was built from was cut (CutPlace); null for a whole body. */
  partial: text(),
});

/** Token and outcome sums, shared by streams and rollups. */
const sums = {
  turns: integer().notNull().default(0),
  /** Turns whose usage reported cache fields: the cache-rate population. */
  measured: integer().notNull().default(0),
  /** Input of turns that reported no cache fields: counted as input, kept out of the cache rate. */
  unmeasuredInput: integer('unmeasured_input').notNull().default(0),
  /** uncached, read and write sum measured turns only, so read / (uncached + read + write) is the cache rate. */
  uncached: integer().notNull().default(0),
  read: integer().notNull().default(0),
  write: integer().notNull().default(0),
  write1h: integer('write_1h').notNull().default(0),
  output: integer().notNull().default(0),
  breaks: integer().notNull().default(0),
  missed: integer().notNull().default(0),
  /** Micro-dollars, so that sums under re-evaluation stay exact. Breaks of unpriced models add nothing here… */
  extraCostMicroUsd: integer('extra_cost_micro_usd').notNull().default(0),
  /** …and are counted here instead: an unknown price is never $0. */
  unpriced: integer().notNull().default(0),
};

export type SumKey = keyof typeof sums;
export type Sums = Record<SumKey, number>;
export const SUM_KEYS = Object.keys(sums) as SumKey[];

/** (project, sessionId, agentId): one cache lineage, with its running sums. */
export const streams = sqliteTable(
  'streams',
  {
    id: integer().primaryKey(),
    projectId: integer('project_id').notNull(),
    sessionId: text('session_id').notNull(),
    agentId: integer('agent_id').notNull(),
    firstTs: integer('first_ts'),
    lastTs: integer('last_ts'),
    /**
     * The longest any turn took to become readable (time to first token, else
     * response end), so that evaluating from a point reads back only as far
     * as a turn could still be in flight.
     */
    maxFlightMs: integer('max_flight_ms').notNull().default(0),
    ...sums,
  },
  (t) => [
    uniqueIndex('streams_key').on(t.projectId, t.sessionId, t.agentId),
    // Sessions seen in a time range, newest first.
    index('streams_last_ts').on(t.projectId, t.lastTs),
  ],
);

/**
 * (project, sessionId): the sum of its streams, kept equal to them by
 * triggers on streams (migrations/0007), so that ranking sessions reads one
 * row per session through an index instead of grouping every stream.
 */
export const sessions = sqliteTable(
  'sessions',
  {
    id: integer().primaryKey(),
    projectId: integer('project_id').notNull(),
    sessionId: text('session_id').notNull(),
    firstTs: integer('first_ts'),
    lastTs: integer('last_ts'),
    ...sums,
    /** The cache rate to rank by, worst first: no data (NULL) sorts after every rate. */
    rateRank: real('rate_rank').generatedAlwaysAs(sql`coalesce(read * 1.0 / nullif(uncached + read + write, 0), 2.0)`, { mode: 'virtual' }),
  },
  (t) => [
    uniqueIndex('sessions_key').on(t.projectId, t.sessionId),
    // One index per ranking: the first rows in index order are the answer.
    index('sessions_last_ts').on(t.projectId, t.lastTs, t.sessionId),
    index('sessions_rate').on(t.projectId, t.rateRank, t.sessionId),
    index('sessions_cost').on(t.projectId, sql`${t.extraCostMicroUsd} DESC`, t.sessionId),
  ],
);

/**
 * One request, stored as its two parts so that joining stays the core's
 * `mergeEvent`: the snapshot part (prefix…) and the usage part (end_ts…).
 * stream_id and ts are null while a usage waits for the snapshot that places it.
 */
export const turns = sqliteTable(
  'turns',
  {
    id: integer().primaryKey(),
    projectId: integer('project_id').notNull(),
    /** 48 bits of xxh64(requestId): a compact lookup key; request_id decides. */
    rid: integer().notNull(),
    requestId: text('request_id').notNull(),
    streamId: integer('stream_id'),
    ts: integer(),
    prefixId: integer('prefix_id'),
    snapshotProviderId: integer('snapshot_provider_id'),
    expectMiss: text('expect_miss'),
    /** 8 bytes per message: xxh64 of each message hash as sent. */
    messageHashes: blob('message_hashes', { mode: 'buffer' }),
    /** Markers on messages (["messages:7@5m"]) as JSON: they move with every turn, so they are not in the prefix. */
    messageMarkers: text('message_markers'),
    /** Content blocks per message as JSON ([1,13,12]), when some message has other than one: what the lookback counts. */
    messageBlocks: text('message_blocks'),
    endTs: integer('end_ts'),
    ttftMs: integer('ttft_ms'),
    usageProviderId: integer('usage_provider_id'),
    usageModelId: integer('usage_model_id'),
    uncached: integer(),
    read: integer(),
    write: integer(),
    write1h: integer('write_1h'),
    output: integer(),
    cacheReported: integer('cache_reported', { mode: 'boolean' }),
    /** The usage carried a cache-write field (explicit caching); null for usage stored before this was kept. */
    writeReported: integer('write_reported', { mode: 'boolean' }),
    diagnostics: text(),
    /** Index into TURN_STATES; null until the turn has usage. */
    state: integer(),
    /** The TTL tiers of the stream's latest write after this turn (core Tiers): where evaluation resumes. */
    tiers: integer(),
    /**
     * Its idle gap (core/insights/ttl.ts), for a turn that reported cache
     * usage: the GAP_BUCKETS index, the stake and its rewritten part; what it
     * adds to gap_rollups. Null for other turns.
     */
    gapBucket: integer('gap_bucket'),
    gapStake: integer('gap_stake'),
    gapRewritten: integer('gap_rewritten'),
    /** Where the request came from (core TurnOrigin): the agent's version, the trace and span telemetry gave it. */
    agentVersion: text('agent_version'),
    traceId: text('trace_id'),
    spanId: text('span_id'),
    /** Size estimate of the prefix as JSON ([tools and system, then the running total per message]), from raw content only: what part of a write could be shared. */
    prefixChars: text('prefix_chars'),
  },
  (t) => [
    index('turns_rid').on(t.rid),
    // Stream evaluation reads a stream in order from a point in time.
    index('turns_stream_ts').on(t.streamId, t.ts),
    // Cold turns (state 1: nothing to read) in a time range, for fan-out cold starts (core/insights/fanout.ts): few, so the index is small.
    index('turns_cold').on(t.projectId, t.ts).where(sql`${t.state} = 1`),
  ],
);

/** The break record of every turn in state `miss`, filterable without decoding it. */
export const breaks = sqliteTable(
  'breaks',
  {
    turnId: integer('turn_id').primaryKey(),
    projectId: integer('project_id').notNull(),
    streamId: integer('stream_id').notNull(),
    ts: integer().notNull(),
    modelId: integer('model_id').notNull(),
    providerId: integer('provider_id').notNull(),
    agentId: integer('agent_id').notNull(),
    reason: text().notNull(),
    /** The SPEC §6 record as JSON. */
    record: text().notNull(),
    /**
     * Parts of the record that the break rollups (below) group and sum,
     * computed by SQLite from the record, never written.
     */
    cause: text().generatedAlwaysAs(sql`json_extract(record, '$.cause')`, { mode: 'virtual' }),
    missed: integer().generatedAlwaysAs(sql`json_extract(record, '$.missedCacheReadTokens')`, { mode: 'virtual' }),
    extraCostUsd: real('extra_cost_usd').generatedAlwaysAs(sql`json_extract(record, '$.estimatedExtraCostUsd')`, { mode: 'virtual' }),
    /** changedToolNames as a JSON array: short, so unnesting it is cheap. */
    changedTools: text('changed_tools').generatedAlwaysAs(sql`json_extract(record, '$.changedToolNames')`, { mode: 'virtual' }),
  },
  (t) => [
    // Newest first within a project; the other filters narrow that scan.
    index('breaks_project_ts').on(t.projectId, t.ts),
    // One session's breaks (the drill-down), without reading every break of the range.
    index('breaks_stream_ts').on(t.streamId, t.ts),
  ],
);

/** The dimensions break rollups are kept per: a rollup's, but for the state (always miss). */
const breakDimensions = {
  projectId: integer('project_id').notNull(),
  minute: integer().notNull(),
  modelId: integer('model_id').notNull(),
  providerId: integer('provider_id').notNull(),
  agentId: integer('agent_id').notNull(),
  reason: text().notNull(),
};

/**
 * Per-minute breaks by reason and cause ('' for none), for the cause
 * breakdown. Kept by triggers on breaks (migrations/0005), so every insert,
 * revision and deletion of a break, retention's included, is counted.
 */
export const breakCauseRollups = sqliteTable(
  'break_cause_rollups',
  {
    ...breakDimensions,
    cause: text().notNull(),
    breaks: integer().notNull().default(0),
    missed: integer().notNull().default(0),
    extraCostMicroUsd: integer('extra_cost_micro_usd').notNull().default(0),
    /** Breaks whose model has no known price. */
    unpriced: integer().notNull().default(0),
  },
  (t) => [uniqueIndex('break_cause_rollups_key').on(t.projectId, t.minute, t.modelId, t.providerId, t.agentId, t.reason, t.cause)],
);

/** Per-minute breaks that named each tool in changedToolNames; kept like break_cause_rollups. */
export const breakToolRollups = sqliteTable(
  'break_tool_rollups',
  {
    ...breakDimensions,
    tool: text().notNull(),
    breaks: integer().notNull().default(0),
  },
  (t) => [uniqueIndex('break_tool_rollups_key').on(t.projectId, t.minute, t.modelId, t.providerId, t.agentId, t.reason, t.tool)],
);

/** The dimensions a rollup row is kept per. */
const dimensions = {
  projectId: integer('project_id').notNull(),
  modelId: integer('model_id').notNull(),
  providerId: integer('provider_id').notNull(),
  agentId: integer('agent_id').notNull(),
  /** Index into TURN_STATES. */
  state: integer().notNull(),
  /** Break reason, or '' for turns that are not breaks. */
  reason: text().notNull(),
};

/** Per-minute sums: what dashboards and /v1/stats read instead of the turns. */
export const rollups = sqliteTable(
  'rollups',
  {
    minute: integer().notNull(),
    ...dimensions,
    ...sums,
  },
  (t) => [
    uniqueIndex('rollups_key').on(t.projectId, t.minute, t.modelId, t.providerId, t.agentId, t.state, t.reason),
  ],
);

/**
 * Per hour and stream, the turns that reported cache usage by idle-gap bucket
 * (core/insights/ttl.ts), with their stake, rewritten part and writes: what
 * TTL advice reads instead of the turns. Kept by the writer like rollups.
 */
export const gapRollups = sqliteTable(
  'gap_rollups',
  {
    projectId: integer('project_id').notNull(),
    /** Epoch hour of the turns' start (ts / 3,600,000). */
    hour: integer().notNull(),
    streamId: integer('stream_id').notNull(),
    modelId: integer('model_id').notNull(),
    providerId: integer('provider_id').notNull(),
    /** Index into GAP_BUCKETS. */
    bucket: integer().notNull(),
    turns: integer().notNull().default(0),
    stake: integer().notNull().default(0),
    rewritten: integer().notNull().default(0),
    written: integer().notNull().default(0),
    written1h: integer('written_1h').notNull().default(0),
  },
  (t) => [uniqueIndex('gap_rollups_key').on(t.projectId, t.hour, t.streamId, t.modelId, t.providerId, t.bucket)],
);

/**
 * Token counts that harnesses export as metrics (claude_code.token.usage,
 * gen_ai.client.token.usage…), per minute: counted, never turned into turns.
 */
export const reportedTokens = sqliteTable(
  'reported_tokens',
  {
    projectId: integer('project_id').notNull(),
    minute: integer().notNull(),
    /** The metric's source, e.g. claude_code, gemini_cli, qwen-code, gen_ai. */
    source: text().notNull(),
    modelId: integer('model_id').notNull(),
    /** input, output, cache_read, cache_write, thought, tool… */
    kind: text().notNull(),
    tokens: integer().notNull().default(0),
  },
  (t) => [uniqueIndex('reported_tokens_key').on(t.projectId, t.minute, t.source, t.modelId, t.kind)],
);

/** The last value of each cumulative series, so that every point adds only what is new. */
export const tokenSeries = sqliteTable(
  'token_series',
  {
    projectId: integer('project_id').notNull(),
    series: text().notNull(),
    startMs: integer('start_ms').notNull(),
    lastMs: integer('last_ms').notNull(),
    lastValue: integer('last_value').notNull(),
  },
  (t) => [uniqueIndex('token_series_key').on(t.projectId, t.series)],
);

/** API keys: only a hash of each key is kept; the key is shown once, when created. */
export const apiKeys = sqliteTable(
  'api_keys',
  {
  id: integer().primaryKey(),
  projectId: integer('project_id').notNull(),
  /** SHA-256 of the key, hex. */
  hash: text().notNull().unique(),
  /** The key's first characters, to recognise it in a listing. */
  prefix: text().notNull(),
  /** Comma-separated: ingest, read, admin. */
  scopes: text().notNull(),
  name: text(),
  createdMs: integer('created_ms').notNull(),
  revokedMs: integer('revoked_ms'),
  },
  // A key is found by its prefix, then its hash is compared in constant time.
  (t) => [index('api_keys_prefix').on(t.prefix)],
);

/**
 * Where `tail` is in each file it follows, written in the transaction of the
 * events read up to it: a restart (even after a kill) resumes exactly there.
 */
export const tailCheckpoints = sqliteTable(
  'tail_checkpoints',
  {
    projectId: integer('project_id').notNull(),
    /** "<device>:<inode>": the file itself, whatever it is named now. */
    fileId: text('file_id').notNull(),
    /** Where it was last seen (its real path, symlinks resolved). */
    path: text().notNull(),
    /** Everything before this byte is stored. */
    offset: integer().notNull(),
    /** Where reading restarts (≤ offset): records waiting for their other half are read again, nothing before offset is stored again. */
    resumeAt: integer('resume_at').notNull(),
    /** The line number at resumeAt, to name file:line in reports. */
    resumeLine: integer('resume_line').notNull(),
    /** xxh64 of the first head_length bytes: tells a reused inode or a rewritten file from the one read. */
    headLength: integer('head_length').notNull(),
    headHash: text('head_hash').notNull(),
    updatedMs: integer('updated_ms').notNull(),
  },
  (t) => [uniqueIndex('tail_checkpoints_key').on(t.projectId, t.fileId)],
);

/**
 * Breaks a harness reported itself (Claude Code's `[PROMPT CACHE BREAK]`
 * debug lines), kept beside cachebreak's own to compare the two attributions.
 */
export const externalBreaks = sqliteTable(
  'external_breaks',
  {
    id: integer().primaryKey(),
    projectId: integer('project_id').notNull(),
    /** Identity of the report (harness, session, source, time, call): reading it again stores nothing. */
    key: text().notNull(),
    harness: text().notNull(),
    sessionId: text('session_id').notNull(),
    /** The stream, as cachebreak names it (main, or the subagent). */
    agentId: text('agent_id').notNull(),
    /** The harness's own name of the request's origin (repl_main_thread, sdk, agent:…). */
    source: text().notNull(),
    ts: integer().notNull(),
    /** The harness's reason text, verbatim. */
    reason: text().notNull(),
    callNumber: integer('call_number'),
    previousCacheReadTokens: integer('previous_cache_read_tokens'),
    currentCacheReadTokens: integer('current_cache_read_tokens'),
    cacheCreationTokens: integer('cache_creation_tokens'),
    /** The harness's diff of the prompt state, when it wrote one. */
    diffPath: text('diff_path'),
    file: text(),
    line: integer(),
  },
  (t) => [
    uniqueIndex('external_breaks_key').on(t.projectId, t.key),
    // Newest first within a project, as /v1/breaks/external lists them.
    index('external_breaks_project_ts').on(t.projectId, t.ts),
  ],
);

/**
 * Facts about the stored data itself. `detection`: the version of SPEC §4's
 * rules that computed the stored states and breaks; a database written under
 * an older version is evaluated again when it is opened.
 */
export const meta = sqliteTable('meta', {
  key: text().primaryKey(),
  value: text().notNull(),
});

/**
 * One half of an OTLP join waiting for its other half (a Claude Code request
 * body's hashes for the response body that names its request id): kept in the
 * database, so that whichever process receives the other half pairs them.
 * Never content: only what the join needs once hashed (value, JSON).
 */
export const waitingHalves = sqliteTable(
  'waiting_halves',
  {
    /** Arrival order: the oldest goes first when the project's halves hold too many bytes. */
    id: integer().primaryKey(),
    projectId: integer('project_id').notNull(),
    /** Both halves of one join share it (session and request_body_id for Claude Code). */
    key: text().notNull(),
    /** Which half: the table it waits in, as the eviction count names it. */
    kind: text().notNull(),
    value: text().notNull(),
    /** Its size as --max-waiting-bytes counts it (ingest/otlp/sources/footprint.ts). */
    bytes: integer().notNull(),
    expiresMs: integer('expires_ms').notNull(),
  },
  (t) => [
    uniqueIndex('waiting_halves_key').on(t.projectId, t.key, t.kind),
    index('waiting_halves_age').on(t.projectId, t.id),
    index('waiting_halves_expiry').on(t.expiresMs),
  ],
);
