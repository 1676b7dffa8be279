// The insights' reads (src/insights/, core/insights/) every backend runs: the
// same SQL over the same tables, and the same values built from its rows. A
// backend adds how its dialect orders text byte-wise (as SQLite does) and
// which turn columns it selects, and runs the query.
import { inArray, sql, type SQL } from 'drizzle-orm';
import type { StreamSnapshot } from '../core/insights/chronic.js';
import type { ColdTurn } from '../core/insights/fanout.js';
import { GAP_BUCKETS, ONE_HOUR, type GapRow } from '../core/insights/ttl.js';
import { toTurn } from '../core/join.js';
import { byCodePoint } from '../core/hash.js';
import { labelIds, type LabelLookup } from './filters.js';
import { decodeMessageHashes, rowToParts, stateIndex, storedJson, type TurnNames, type TurnRow } from './sqlite/rows.js';
import type { Filters, StreamSums, TimeRange } from './store.js';

/** Text as the backend orders and compares it: byte-wise, whatever the database's collation. */
export type Bytewise = (expression: SQL) => SQL;

/** The filters the insights take (sessionId and agentId), on the streams table aliased `s`. */
function streamFilters(lookup: LabelLookup, filters: Filters): SQL {
  const conditions = [sql``];
  if (filters.sessionId) conditions.push(sql` AND ${inArray(sql.raw('s.session_id'), filters.sessionId)}`);
  const agents = labelIds(lookup, 'agent', filters.agentId);
  if (agents) conditions.push(sql` AND ${inArray(sql.raw('s.agent_id'), agents)}`);
  return sql.join(conditions);
}

const from = (range: TimeRange) => range.from ?? Number.MIN_SAFE_INTEGER;
const to = (range: TimeRange) => range.to ?? Number.MAX_SAFE_INTEGER;

export type GapRowsRow = {
  session_id: string;
  agent: string;
  model: string;
  provider: string;
  bucket: number;
  turns: number;
  stake: number;
  rewritten: number;
  written: number;
  written_1h: number;
};

/**
 * Turns with cache usage in the range, summed by stream (session and agent),
 * model, provider and gap bucket (core/insights/ttl.ts defines the gap, stake
 * and rewritten part), from gap_rollups: the hours the range touches.
 */
export function gapRowsQuery(lookup: LabelLookup, projectId: number, range: TimeRange, filters: Filters): SQL {
  const fromHour = range.from === undefined ? Number.MIN_SAFE_INTEGER : Math.floor(range.from / ONE_HOUR);
  const toHour = range.to === undefined ? Number.MAX_SAFE_INTEGER : Math.ceil(range.to / ONE_HOUR);
  return sql`SELECT x.session_id, coalesce(a.value, '') AS agent, coalesce(m.value, '') AS model, coalesce(p.value, '') AS provider, x.bucket,
      x.turns, x.stake, x.rewritten, x.written, x.written_1h
    FROM (
      SELECT s.session_id, s.agent_id, g.model_id, g.provider_id, g.bucket, sum(g.turns) AS turns, sum(g.stake) AS stake,
        sum(g.rewritten) AS rewritten, sum(g.written) AS written, sum(g.written_1h) AS written_1h
      FROM gap_rollups g
      JOIN streams s ON s.id = g.stream_id
      WHERE g.project_id = ${projectId} AND g.hour >= ${fromHour} AND g.hour < ${toHour}${streamFilters(lookup, filters)}
      GROUP BY g.stream_id, s.session_id, s.agent_id, g.model_id, g.provider_id, g.bucket
      HAVING sum(g.turns) > 0
    ) x
    LEFT JOIN labels a ON a.id = x.agent_id
    LEFT JOIN labels m ON m.id = x.model_id
    LEFT JOIN labels p ON p.id = x.provider_id`;
}

/** The gap rows, in one order whatever order the database grouped them in. */
export function gapRowsOf(rows: readonly GapRowsRow[]): GapRow[] {
  return rows
    .map((r) => ({
      sessionId: r.session_id,
      agentId: r.agent,
      model: r.model,
      provider: r.provider,
      bucket: GAP_BUCKETS[r.bucket]!,
      turns: r.turns,
      stake: r.stake,
      rewritten: r.rewritten,
      written: r.written,
      written1h: r.written_1h,
    }))
    .sort(
      (a, b) =>
        byCodePoint(a.sessionId, b.sessionId) ||
        byCodePoint(a.agentId, b.agentId) ||
        byCodePoint(a.model, b.model) ||
        byCodePoint(a.provider, b.provider) ||
        GAP_BUCKETS.indexOf(a.bucket) - GAP_BUCKETS.indexOf(b.bucket),
    );
}

export type LowRateRow = Record<
  'first_ts' | 'last_ts' | 'turns' | 'measured' | 'unmeasured_input' | 'uncached' | 'read' | 'write' | 'write_1h' | 'output' | 'breaks' | 'extra_cost_micro_usd' | 'unpriced',
  number
> & { session_id: string; agent: string };

/** Streams of low cache rate (see Store.lowRateStreams): the streams table alone, through its (project, last_ts) index. */
export function lowRateStreamsQuery(
  lookup: LabelLookup,
  projectId: number,
  range: TimeRange,
  filters: Filters,
  minTurns: number,
  maxRate: number,
  limit: number,
  bytewise: Bytewise,
): SQL {
  return sql`SELECT s.session_id, coalesce(a.value, 'main') AS agent, s.first_ts, s.last_ts, s.turns, s.measured, s.unmeasured_input, s.uncached,
      s.read, s.write, s.write_1h, s.output, s.breaks, s.extra_cost_micro_usd, s.unpriced
    FROM streams s
    LEFT JOIN labels a ON a.id = s.agent_id
    WHERE s.project_id = ${projectId} AND s.last_ts >= ${from(range)} AND s.first_ts < ${to(range)} AND s.measured >= ${minTurns}
      AND s.read < CAST(${maxRate} AS double precision) * (s.uncached + s.read + s.write)${streamFilters(lookup, filters)}
    ORDER BY s.uncached + s.write DESC, ${bytewise(sql.raw('s.session_id'))}, ${bytewise(sql.raw('a.value'))}
    LIMIT ${limit}`;
}

export function streamSumsOf(r: LowRateRow): StreamSums {
  return {
    sessionId: r.session_id,
    agentId: r.agent,
    firstSeen: r.first_ts,
    lastSeen: r.last_ts,
    turns: r.turns,
    measuredTurns: r.measured,
    tokens: { uncached: r.uncached, read: r.read, write: r.write, write1h: r.write_1h, output: r.output },
    unreportedInputTokens: r.unmeasured_input,
    breaks: r.breaks,
    extraCostMicroUsd: r.extra_cost_micro_usd,
    unpricedBreaks: r.unpriced,
  };
}

/** A stream's newest turns, newest first (see Store.streamSnapshots); `columns` selects a TurnRow from turns aliased `t`. */
export function streamSnapshotsQuery(columns: string, streamId: number, limit: number, bytewise: Bytewise): SQL {
  return sql`SELECT ${sql.raw(columns)} FROM turns t WHERE t.stream_id = ${streamId} AND t.ts IS NOT NULL
    ORDER BY t.ts DESC, ${bytewise(sql.raw('t.request_id'))} DESC LIMIT ${limit}`;
}

export function streamSnapshotsOf(rows: readonly TurnRow[], names: TurnNames): StreamSnapshot[] {
  return rows.flatMap((row) => {
    const turn = toTurn(rowToParts(row, names));
    if (!turn) return [];
    return [{ ts: turn.ts, model: turn.model ?? null, provider: turn.provider ?? null, prefix: turn.prefix ?? null, usage: turn.usage ?? null }];
  });
}

export type ColdTurnRow = {
  request_id: string;
  session_id: string;
  agent: string;
  ts: number;
  model: string;
  provider: string;
  system_hash: string | null;
  tools_hash: string | null;
  write: number;
  write_1h: number | null;
  message_hashes: Buffer | null;
  prefix_chars: string | null;
};

/** Inlined, not bound: a planner uses the partial index turns_cold only for the literal it was made with. */
const COLD = sql.raw(String(stateIndex('cold')));

/** Turns in state cold in the range, oldest first, with their prefix keys (see Store.coldTurns): through the turns_cold index. */
export function coldTurnsQuery(lookup: LabelLookup, projectId: number, range: TimeRange, filters: Filters, limit: number, bytewise: Bytewise): SQL {
  return sql`SELECT t.request_id, s.session_id, coalesce(a.value, 'main') AS agent, t.ts, p.model, coalesce(pr.value, '') AS provider,
      p.system_hash, ts2.hash AS tools_hash, t.write, t.write_1h, t.message_hashes, t.prefix_chars
    FROM turns t
    JOIN streams s ON s.id = t.stream_id
    JOIN prefixes p ON p.id = t.prefix_id
    LEFT JOIN toolsets ts2 ON ts2.id = p.toolset_id
    LEFT JOIN labels a ON a.id = s.agent_id
    LEFT JOIN labels pr ON pr.id = coalesce(t.usage_provider_id, t.snapshot_provider_id)
    WHERE t.project_id = ${projectId} AND t.state = ${COLD} AND t.ts >= ${from(range)} AND t.ts < ${to(range)}${streamFilters(lookup, filters)}
    ORDER BY t.ts, ${bytewise(sql.raw('t.request_id'))}
    LIMIT ${limit}`;
}

export function coldTurnOf(r: ColdTurnRow): ColdTurn {
  return {
    requestId: r.request_id,
    sessionId: r.session_id,
    agentId: r.agent,
    ts: r.ts,
    model: r.model,
    provider: r.provider,
    systemHash: r.system_hash,
    toolsHash: r.tools_hash,
    write: r.write,
    write1h: r.write_1h ?? 0,
    messageHashes: r.message_hashes === null ? null : decodeMessageHashes(r.message_hashes),
    prefixChars: prefixCharsOf(r.prefix_chars),
  };
}

/** A stored size estimate, or null when absent or not a list of sizes. */
function prefixCharsOf(text: string | null): number[] | null {
  const chars = text === null ? undefined : storedJson<unknown>(text);
  return Array.isArray(chars) && chars.every((n) => typeof n === 'number') ? chars : null;
}
