// The insights' reads (src/insights/, core/insights/): plain SQL, no
// SQLite-only function, so that the PostgreSQL store can run the same.
import type Database from 'better-sqlite3';
import { GAP_BUCKETS, ONE_HOUR, type GapRow } from '../../core/insights/ttl.js';
import type { StreamSnapshot } from '../../core/insights/chronic.js';
import { toTurn } from '../../core/join.js';
import type { Filters, StreamSums, TimeRange } from '../store.js';
import type { Dictionary } from './dictionary.js';
import { labelIds } from './filters.js';
import { rowToParts, stateIndex, turnColumns, type TurnRow } from './rows.js';
import type { ColdTurn } from '../../core/insights/fanout.js';

/** `IN (?, ?, …)` for `values`, or nothing when there is no filter. */
function inList(column: string, values: readonly (string | number)[] | undefined, params: (string | number)[]): string {
  if (values === undefined) return '';
  params.push(...values);
  return ` AND ${column} IN (${values.map(() => '?').join(', ') || 'NULL'})`;
}

/**
 * Turns with cache usage in the range, summed by stream (session and agent),
 * model, provider and gap bucket (core/insights/ttl.ts defines the gap, stake
 * and rewritten part), from gap_rollups: the hours the range touches.
 */
export function gapRows(sqlite: Database.Database, dictionary: Dictionary, projectId: number, range: TimeRange, filters: Filters): GapRow[] {
  const params: (string | number)[] = [
    projectId,
    range.from === undefined ? Number.MIN_SAFE_INTEGER : Math.floor(range.from / ONE_HOUR),
    range.to === undefined ? Number.MAX_SAFE_INTEGER : Math.ceil(range.to / ONE_HOUR),
  ];
  const streamFilters =
    inList('s.session_id', filters.sessionId, params) + inList('s.agent_id', labelIds(dictionary, 'agent', filters.agentId), params);
  const rows = sqlite
    .prepare<(string | number)[], { session_id: string; agent_id: number; model_id: number; provider_id: number; bucket: number; turns: number; stake: number; rewritten: number; written: number; written_1h: number }>(
      `SELECT s.session_id, s.agent_id, g.model_id, g.provider_id, g.bucket, sum(g.turns) AS turns, sum(g.stake) AS stake,
         sum(g.rewritten) AS rewritten, sum(g.written) AS written, sum(g.written_1h) AS written_1h
       FROM gap_rollups g
       JOIN streams s ON s.id = g.stream_id
       WHERE g.project_id = ? AND g.hour >= ? AND g.hour < ?${streamFilters}
       GROUP BY g.stream_id, s.session_id, s.agent_id, g.model_id, g.provider_id, g.bucket
       HAVING sum(g.turns) > 0`,
    )
    .all(...params);
  return rows.map((r) => ({
    sessionId: r.session_id,
    agentId: dictionary.labelValue(r.agent_id) ?? '',
    model: dictionary.labelValue(r.model_id) ?? '',
    provider: dictionary.labelValue(r.provider_id) ?? '',
    bucket: GAP_BUCKETS[r.bucket]!,
    turns: r.turns,
    stake: r.stake,
    rewritten: r.rewritten,
    written: r.written,
    written1h: r.written_1h,
  }));
}

/** Streams of low cache rate (see Store.lowRateStreams): the streams table alone, through its (project, last_ts) index. */
export function lowRateStreams(
  sqlite: Database.Database,
  dictionary: Dictionary,
  projectId: number,
  range: TimeRange,
  filters: Filters,
  minTurns: number,
  maxRate: number,
  limit: number,
): StreamSums[] {
  const params: (string | number)[] = [projectId, range.from ?? Number.MIN_SAFE_INTEGER, range.to ?? Number.MAX_SAFE_INTEGER, minTurns, maxRate];
  const streamFilters = inList('session_id', filters.sessionId, params) + inList('agent_id', labelIds(dictionary, 'agent', filters.agentId), params);
  params.push(limit);
  const rows = sqlite
    .prepare<(string | number)[], Record<'first_ts' | 'last_ts' | 'turns' | 'measured' | 'unmeasured_input' | 'uncached' | 'read' | 'write' | 'write_1h' | 'output' | 'breaks' | 'extra_cost_micro_usd' | 'unpriced' | 'agent_id', number> & { session_id: string }>(
      `SELECT session_id, agent_id, first_ts, last_ts, turns, measured, unmeasured_input, uncached, read, write, write_1h, output, breaks, extra_cost_micro_usd, unpriced
       FROM streams
       WHERE project_id = ? AND last_ts >= ? AND first_ts < ? AND measured >= ? AND read < ? * (uncached + read + write)${streamFilters}
       ORDER BY uncached + write DESC, session_id, agent_id
       LIMIT ?`,
    )
    .all(...params);
  return rows.map((r) => ({
    sessionId: r.session_id,
    agentId: dictionary.labelValue(r.agent_id) ?? 'main',
    firstSeen: r.first_ts,
    lastSeen: r.last_ts,
    turns: r.turns,
    measuredTurns: r.measured,
    tokens: { uncached: r.uncached, read: r.read, write: r.write, write1h: r.write_1h, output: r.output },
    unreportedInputTokens: r.unmeasured_input,
    breaks: r.breaks,
    extraCostMicroUsd: r.extra_cost_micro_usd,
    unpricedBreaks: r.unpriced,
  }));
}

/** A stream's newest turns with their prefixes and usage (see Store.streamSnapshots). */
export function streamSnapshots(sqlite: Database.Database, dictionary: Dictionary, streamId: number, limit: number): StreamSnapshot[] {
  const rows = sqlite
    .prepare<[number, number], TurnRow>(`SELECT ${turnColumns()} FROM turns WHERE stream_id = ? AND ts IS NOT NULL ORDER BY ts DESC, request_id DESC LIMIT ?`)
    .all(streamId, limit);
  return rows.flatMap((row) => {
    const turn = toTurn(rowToParts(row, dictionary));
    if (!turn) return [];
    return [{ ts: turn.ts, model: turn.model ?? null, provider: turn.provider ?? null, prefix: turn.prefix ?? null, usage: turn.usage ?? null }];
  });
}

/** Inlined, not bound: the planner uses the partial index turns_cold only for the literal it was made with. */
const COLD = stateIndex('cold');

/** Turns in state cold in the range, oldest first, with their prefix keys (see Store.coldTurns): through the turns_cold index. */
export function coldTurns(sqlite: Database.Database, dictionary: Dictionary, projectId: number, range: TimeRange, filters: Filters, limit: number): ColdTurn[] {
  const params: (string | number)[] = [projectId, range.from ?? Number.MIN_SAFE_INTEGER, range.to ?? Number.MAX_SAFE_INTEGER];
  const streamFilters = inList('s.session_id', filters.sessionId, params) + inList('s.agent_id', labelIds(dictionary, 'agent', filters.agentId), params);
  params.push(limit);
  const rows = sqlite
    .prepare<(string | number)[], { request_id: string; session_id: string; agent_id: number; ts: number; model: string; provider_id: number | null; system_hash: string | null; tools_hash: string | null; write: number; write_1h: number | null }>(
      `SELECT t.request_id, s.session_id, s.agent_id, t.ts, p.model, coalesce(t.usage_provider_id, t.snapshot_provider_id) AS provider_id,
         p.system_hash, ts2.hash AS tools_hash, t.write, t.write_1h
       FROM turns t
       JOIN streams s ON s.id = t.stream_id
       JOIN prefixes p ON p.id = t.prefix_id
       LEFT JOIN toolsets ts2 ON ts2.id = p.toolset_id
       WHERE t.project_id = ? AND t.state = ${COLD} AND t.ts >= ? AND t.ts < ?${streamFilters}
       ORDER BY t.ts, t.request_id
       LIMIT ?`,
    )
    .all(...params);
  return rows.map((r) => ({
    requestId: r.request_id,
    sessionId: r.session_id,
    agentId: dictionary.labelValue(r.agent_id) ?? 'main',
    ts: r.ts,
    model: r.model,
    provider: dictionary.labelValue(r.provider_id) ?? '',
    systemHash: r.system_hash,
    toolsHash: r.tools_hash,
    write: r.write,
    write1h: r.write_1h ?? 0,
  }));
}
