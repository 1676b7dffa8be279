// The PostgreSQL schema: the same tables, columns and meanings as the SQLite
// one (../schema.ts), for a database that many cachebreak processes share.
// Times and sums are bigint (JS numbers), blobs bytea. What SQLite keeps with
// triggers (session sums, break rollups) PostgreSQL keeps with triggers too,
// written by hand in migrations/pg (see the migration after the tables).
import { sql } from 'drizzle-orm';
import { bigint, boolean, customType, doublePrecision, index, integer, jsonb, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';

const bytea = customType<{ data: Buffer; driverData: Buffer }>({ dataType: () => 'bytea' });

/** A 64-bit integer that is a JS number (times, sums, token counts: all far below 2^53). */
const big = (name?: string) => (name === undefined ? bigint({ mode: 'number' }) : bigint(name, { mode: 'number' }));

export const projects = pgTable('projects', {
  id: integer().primaryKey().generatedByDefaultAsIdentity(),
  name: text().notNull().unique(),
});

/** Models, providers and agent names. An unknown value is the empty string. */
export const labels = pgTable(
  'labels',
  {
    id: integer().primaryKey().generatedByDefaultAsIdentity(),
    kind: text({ enum: ['model', 'provider', 'agent'] }).notNull(),
    value: text().notNull(),
  },
  (t) => [uniqueIndex('labels_kind_value').on(t.kind, t.value)],
);

/** A tool list in the order sent: JSON [[name, schemaHash], …], keyed by its aggregate hash. */
export const toolsets = pgTable('toolsets', {
  id: integer().primaryKey().generatedByDefaultAsIdentity(),
  hash: text().notNull().unique(),
  tools: text().notNull(),
});

/** Everything of a snapshot but its message hashes, keyed by a hash of the whole. */
export const prefixes = pgTable('prefixes', {
  id: integer().primaryKey().generatedByDefaultAsIdentity(),
  hash: text().notNull().unique(),
  model: text().notNull(),
  systemHash: text('system_hash'),
  systemBlockHashes: text('system_block_hashes'),
  toolsetId: integer('toolset_id'),
  cacheControlHash: text('cache_control_hash'),
  ttlMs: big('ttl_ms'),
  /** Markers not on a message (["tools@1h","system:1@5m"]) as JSON; message markers belong to each turn. */
  markers: text(),
  /** Request parameter hashes by name, as JSON. */
  params: text(),
  /** Where the body the snapshot was built from was cut (CutPlace); null for a whole body. */
  partial: text(),
});

/** Token and outcome sums, shared by streams and rollups (meanings: ../schema.ts). */
const sums = () => ({
  turns: big().notNull().default(0),
  measured: big().notNull().default(0),
  unmeasuredInput: big('unmeasured_input').notNull().default(0),
  uncached: big().notNull().default(0),
  read: big().notNull().default(0),
  write: big().notNull().default(0),
  write1h: big('write_1h').notNull().default(0),
  output: big().notNull().default(0),
  breaks: big().notNull().default(0),
  missed: big().notNull().default(0),
  extraCostMicroUsd: big('extra_cost_micro_usd').notNull().default(0),
  unpriced: big().notNull().default(0),
});

/** (project, sessionId, agentId): one cache lineage, with its running sums. */
export const streams = pgTable(
  'streams',
  {
    id: integer().primaryKey().generatedByDefaultAsIdentity(),
    projectId: integer('project_id').notNull(),
    sessionId: text('session_id').notNull(),
    agentId: integer('agent_id').notNull(),
    firstTs: big('first_ts'),
    lastTs: big('last_ts'),
    /** The longest any turn took to become readable (see ../schema.ts). */
    maxFlightMs: big('max_flight_ms').notNull().default(0),
    ...sums(),
  },
  (t) => [
    uniqueIndex('streams_key').on(t.projectId, t.sessionId, t.agentId),
    index('streams_last_ts').on(t.projectId, t.lastTs),
  ],
);

/** (project, sessionId): the sum of its streams, kept equal to them by a trigger on streams. */
export const sessions = pgTable(
  'sessions',
  {
    id: integer().primaryKey().generatedByDefaultAsIdentity(),
    projectId: integer('project_id').notNull(),
    sessionId: text('session_id').notNull(),
    firstTs: big('first_ts'),
    lastTs: big('last_ts'),
    ...sums(),
    /** The cache rate to rank by, worst first: no data sorts after every rate. */
    rateRank: doublePrecision('rate_rank').generatedAlwaysAs(
      sql`coalesce("read"::double precision / nullif("uncached" + "read" + "write", 0), 2.0)`,
    ),
  },
  (t) => [
    uniqueIndex('sessions_key').on(t.projectId, t.sessionId),
    index('sessions_last_ts').on(t.projectId, t.lastTs, t.sessionId),
    index('sessions_rate').on(t.projectId, t.rateRank, t.sessionId),
    index('sessions_cost').on(t.projectId, t.extraCostMicroUsd.desc(), t.sessionId),
  ],
);

/** One request, stored as its snapshot part and its usage part (see ../schema.ts). */
export const turns = pgTable(
  'turns',
  {
    id: bigint({ mode: 'number' }).primaryKey().generatedByDefaultAsIdentity(),
    projectId: integer('project_id').notNull(),
    /** 48 bits of xxh64(requestId): a compact lookup key; request_id decides. */
    rid: big().notNull(),
    requestId: text('request_id').notNull(),
    streamId: integer('stream_id'),
    ts: big(),
    prefixId: integer('prefix_id'),
    snapshotProviderId: integer('snapshot_provider_id'),
    expectMiss: text('expect_miss'),
    /** 8 bytes per message: xxh64 of each message hash as sent. */
    messageHashes: bytea('message_hashes'),
    messageMarkers: text('message_markers'),
    messageBlocks: text('message_blocks'),
    endTs: big('end_ts'),
    ttftMs: big('ttft_ms'),
    usageProviderId: integer('usage_provider_id'),
    usageModelId: integer('usage_model_id'),
    uncached: big(),
    read: big(),
    write: big(),
    write1h: big('write_1h'),
    output: big(),
    cacheReported: boolean('cache_reported'),
    writeReported: boolean('write_reported'),
    diagnostics: text(),
    /** Index into TURN_STATES; null until the turn has usage. */
    state: integer(),
    /** The TTL tiers of the stream's latest write after this turn (core Tiers). */
    tiers: integer(),
    /** Its idle gap, for a turn that reported cache usage: bucket index, stake, rewritten part (see ../schema.ts). */
    gapBucket: integer('gap_bucket'),
    gapStake: big('gap_stake'),
    gapRewritten: big('gap_rewritten'),
    /** Where the request came from: the agent's version, the trace and span telemetry gave it. */
    agentVersion: text('agent_version'),
    traceId: text('trace_id'),
    spanId: text('span_id'),
    /** Size estimate of the prefix as JSON ([tools and system, then the running total per message]), from raw content only. */
    prefixChars: text('prefix_chars'),
  },
  (t) => [
    index('turns_rid').on(t.rid),
    index('turns_stream_ts').on(t.streamId, t.ts),
    // Cold turns (state 1) in a time range, for fan-out cold starts: few, so the index is small.
    index('turns_cold').on(t.projectId, t.ts).where(sql`${t.state} = 1`),
  ],
);

/** The break record of every turn in state `miss`, filterable without decoding it. */
export const breaks = pgTable(
  'breaks',
  {
    turnId: bigint('turn_id', { mode: 'number' }).primaryKey(),
    projectId: integer('project_id').notNull(),
    streamId: integer('stream_id').notNull(),
    ts: big().notNull(),
    modelId: integer('model_id').notNull(),
    providerId: integer('provider_id').notNull(),
    agentId: integer('agent_id').notNull(),
    reason: text().notNull(),
    /** The SPEC §6 record as JSON text, returned as written. */
    record: text().notNull(),
    /** Parts of the record the break rollups group and sum, computed by PostgreSQL from it. */
    cause: text().generatedAlwaysAs(sql`(record::jsonb ->> 'cause')`),
    missed: big().generatedAlwaysAs(sql`((record::jsonb ->> 'missedCacheReadTokens')::bigint)`),
    extraCostUsd: doublePrecision('extra_cost_usd').generatedAlwaysAs(sql`((record::jsonb ->> 'estimatedExtraCostUsd')::double precision)`),
    /** changedToolNames as a JSON array (jsonb: unnested without parsing again). */
    changedTools: jsonb('changed_tools').generatedAlwaysAs(sql`(record::jsonb -> 'changedToolNames')`),
  },
  (t) => [
    index('breaks_project_ts').on(t.projectId, t.ts),
    index('breaks_stream_ts').on(t.streamId, t.ts),
  ],
);

const breakDimensions = () => ({
  projectId: integer('project_id').notNull(),
  minute: big().notNull(),
  modelId: integer('model_id').notNull(),
  providerId: integer('provider_id').notNull(),
  agentId: integer('agent_id').notNull(),
  reason: text().notNull(),
});

/** Per-minute breaks by reason and cause ('' for none); kept by triggers on breaks. */
export const breakCauseRollups = pgTable(
  'break_cause_rollups',
  {
    ...breakDimensions(),
    cause: text().notNull(),
    breaks: big().notNull().default(0),
    missed: big().notNull().default(0),
    extraCostMicroUsd: big('extra_cost_micro_usd').notNull().default(0),
    unpriced: big().notNull().default(0),
  },
  (t) => [uniqueIndex('break_cause_rollups_key').on(t.projectId, t.minute, t.modelId, t.providerId, t.agentId, t.reason, t.cause)],
);

/** Per-minute breaks that named each tool in changedToolNames; kept like break_cause_rollups. */
export const breakToolRollups = pgTable(
  'break_tool_rollups',
  {
    ...breakDimensions(),
    tool: text().notNull(),
    breaks: big().notNull().default(0),
  },
  (t) => [uniqueIndex('break_tool_rollups_key').on(t.projectId, t.minute, t.modelId, t.providerId, t.agentId, t.reason, t.tool)],
);

/** Per-minute sums: what dashboards and /v1/stats read instead of the turns. */
export const rollups = pgTable(
  'rollups',
  {
    minute: big().notNull(),
    projectId: integer('project_id').notNull(),
    modelId: integer('model_id').notNull(),
    providerId: integer('provider_id').notNull(),
    agentId: integer('agent_id').notNull(),
    state: integer().notNull(),
    reason: text().notNull(),
    ...sums(),
  },
  (t) => [uniqueIndex('rollups_key').on(t.projectId, t.minute, t.modelId, t.providerId, t.agentId, t.state, t.reason)],
);

/** Per hour and stream, the turns that reported cache usage by idle-gap bucket (see ../schema.ts); kept by the writer. */
export const gapRollups = pgTable(
  'gap_rollups',
  {
    projectId: integer('project_id').notNull(),
    /** Epoch hour of the turns' start (ts / 3,600,000). */
    hour: big().notNull(),
    streamId: integer('stream_id').notNull(),
    modelId: integer('model_id').notNull(),
    providerId: integer('provider_id').notNull(),
    /** Index into GAP_BUCKETS. */
    bucket: integer().notNull(),
    turns: big().notNull().default(0),
    stake: big().notNull().default(0),
    rewritten: big().notNull().default(0),
    written: big().notNull().default(0),
    written1h: big('written_1h').notNull().default(0),
  },
  (t) => [uniqueIndex('gap_rollups_key').on(t.projectId, t.hour, t.streamId, t.modelId, t.providerId, t.bucket)],
);

/** Token counts that harnesses export as metrics, per minute. */
export const reportedTokens = pgTable(
  'reported_tokens',
  {
    projectId: integer('project_id').notNull(),
    minute: big().notNull(),
    source: text().notNull(),
    modelId: integer('model_id').notNull(),
    kind: text().notNull(),
    /** A metric's points may be doubles: kept as sent, as SQLite keeps them. */
    tokens: doublePrecision().notNull().default(0),
  },
  (t) => [uniqueIndex('reported_tokens_key').on(t.projectId, t.minute, t.source, t.modelId, t.kind)],
);

/** The last value of each cumulative series, so that every point adds only what is new. */
export const tokenSeries = pgTable(
  'token_series',
  {
    projectId: integer('project_id').notNull(),
    series: text().notNull(),
    startMs: big('start_ms').notNull(),
    lastMs: big('last_ms').notNull(),
    lastValue: doublePrecision('last_value').notNull(),
  },
  (t) => [uniqueIndex('token_series_key').on(t.projectId, t.series)],
);

/** API keys: only a hash of each key is kept. */
export const apiKeys = pgTable(
  'api_keys',
  {
    id: integer().primaryKey().generatedByDefaultAsIdentity(),
    projectId: integer('project_id').notNull(),
    hash: text().notNull().unique(),
    prefix: text().notNull(),
    scopes: text().notNull(),
    name: text(),
    createdMs: big('created_ms').notNull(),
    revokedMs: big('revoked_ms'),
  },
  (t) => [index('api_keys_prefix').on(t.prefix)],
);

/** Where `tail` is in each file it follows, written in the transaction of the events read up to it. */
export const tailCheckpoints = pgTable(
  'tail_checkpoints',
  {
    projectId: integer('project_id').notNull(),
    fileId: text('file_id').notNull(),
    path: text().notNull(),
    offset: big().notNull(),
    resumeAt: big('resume_at').notNull(),
    resumeLine: big('resume_line').notNull(),
    headLength: big('head_length').notNull(),
    headHash: text('head_hash').notNull(),
    updatedMs: big('updated_ms').notNull(),
  },
  (t) => [uniqueIndex('tail_checkpoints_key').on(t.projectId, t.fileId)],
);

/** Breaks a harness reported itself, kept beside cachebreak's own. */
export const externalBreaks = pgTable(
  'external_breaks',
  {
    id: integer().primaryKey().generatedByDefaultAsIdentity(),
    projectId: integer('project_id').notNull(),
    key: text().notNull(),
    harness: text().notNull(),
    sessionId: text('session_id').notNull(),
    agentId: text('agent_id').notNull(),
    source: text().notNull(),
    ts: big().notNull(),
    reason: text().notNull(),
    callNumber: big('call_number'),
    previousCacheReadTokens: big('previous_cache_read_tokens'),
    currentCacheReadTokens: big('current_cache_read_tokens'),
    cacheCreationTokens: big('cache_creation_tokens'),
    diffPath: text('diff_path'),
    file: text(),
    line: big(),
  },
  (t) => [
    uniqueIndex('external_breaks_key').on(t.projectId, t.key),
    index('external_breaks_project_ts').on(t.projectId, t.ts),
  ],
);

/** Facts about the stored data itself (`detection`: the rules version that computed it). */
export const meta = pgTable('meta', {
  key: text().primaryKey(),
  value: text().notNull(),
});

/** OTLP join halves waiting for their other half, for any process to pair (see ../schema.ts). */
export const waitingHalves = pgTable(
  'waiting_halves',
  {
    id: big().primaryKey().generatedByDefaultAsIdentity(),
    projectId: integer('project_id').notNull(),
    key: text().notNull(),
    kind: text().notNull(),
    value: text().notNull(),
    bytes: big().notNull(),
    expiresMs: big('expires_ms').notNull(),
  },
  (t) => [
    uniqueIndex('waiting_halves_key').on(t.projectId, t.key, t.kind),
    index('waiting_halves_age').on(t.projectId, t.id),
    index('waiting_halves_expiry').on(t.expiresMs),
  ],
);
