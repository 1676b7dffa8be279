// Converts between stored turn rows and the core's turn parts, and computes
// what a turn adds to the rollups.
import { hashString } from '../../core/hash.js';
import type { TurnParts, UsagePart } from '../../core/join.js';
import { ORIGIN_KEYS, TURN_STATES, type BreakRecord, type Turn, type TurnOrigin, type TurnState } from '../../core/types.js';
import type { Sums } from '../schema.js';
import type { Names } from '../evaluate/names.js';

export const TURN_COLUMN_NAMES = [
  'id', 'request_id', 'stream_id', 'ts', 'prefix_id', 'snapshot_provider_id', 'expect_miss', 'message_hashes',
  'message_markers', 'end_ts', 'ttft_ms', 'usage_provider_id', 'usage_model_id', 'uncached', 'read', 'write',
  'write_1h', 'output', 'cache_reported', 'write_reported', 'diagnostics', 'state', 'tiers', 'gap_bucket', 'gap_stake',
  'gap_rewritten', 'message_blocks', 'agent_version', 'trace_id', 'span_id', 'prefix_chars',
] as const;

/** 48 bits of xxh64: exact in a JS number and in SQLite's compact integer encoding. */
export function ridOf(requestId: string): number {
  return parseInt(hashString(requestId).slice(0, 12), 16);
}

/** The columns a TurnRow is read from, optionally qualified by a table alias. */
export function turnColumns(alias?: string): string {
  return TURN_COLUMN_NAMES.map((c) => (alias ? `${alias}.${c}` : c)).join(', ');
}

export interface TurnRow {
  id: number;
  request_id: string;
  stream_id: number | null;
  ts: number | null;
  prefix_id: number | null;
  snapshot_provider_id: number | null;
  expect_miss: string | null;
  message_hashes: Buffer | null;
  message_markers: string | null;
  end_ts: number | null;
  ttft_ms: number | null;
  usage_provider_id: number | null;
  usage_model_id: number | null;
  uncached: number | null;
  read: number | null;
  write: number | null;
  write_1h: number | null;
  output: number | null;
  cache_reported: number | null;
  write_reported: number | null;
  diagnostics: string | null;
  state: number | null;
  tiers: number | null;
  gap_bucket: number | null;
  gap_stake: number | null;
  gap_rewritten: number | null;
  message_blocks: string | null;
  agent_version: string | null;
  trace_id: string | null;
  span_id: string | null;
  prefix_chars: string | null;
}

/**
 * Message hashes are opaque strings; the store keeps xxh64 of each (8 bytes),
 * which keeps equality and costs little. `storedMessageHashes` is that form as
 * hex: turns compare in it whether they come from a request or from disk.
 */
export function storedMessageHashes(hashes: readonly string[]): string[] {
  return hashes.map((hash) => hashString(hash));
}

export function encodeMessageHashes(stored: readonly string[]): Buffer {
  const out = Buffer.allocUnsafe(stored.length * 8);
  stored.forEach((hash, i) => out.write(hash, i * 8, 'hex'));
  return out;
}

export function decodeMessageHashes(blob: Buffer): string[] {
  const hashes: string[] = [];
  for (let i = 0; i < blob.length; i += 8) hashes.push(blob.toString('hex', i, i + 8));
  return hashes;
}

/** Stored JSON, or undefined when the stored text is not JSON (a row written by something else): one bad row never fails a read. */
export function storedJson<T>(text: string): T | undefined {
  try {
    return JSON.parse(text) as T;
  } catch {
    return undefined;
  }
}

/** What reading a turn row needs of the store's ids. */
export type TurnNames = Pick<Names, 'labelValue' | 'streamById' | 'prefixOf'>;

/** The origin columns of a turn row: agent_version, trace_id, span_id. */
export function originColumns(origin: TurnOrigin | undefined): [string | null, string | null, string | null] {
  return [origin?.agentVersion ?? null, origin?.traceId ?? null, origin?.spanId ?? null];
}

/** A stored break record; one stored before the record named its origin gets nulls. */
export function storedBreak(text: string): BreakRecord | undefined {
  const record = storedJson<BreakRecord>(text);
  // Fields already stored keep their place: the record compares as JSON.
  return record === undefined ? undefined : { ...record, agentVersion: record.agentVersion ?? null, traceId: record.traceId ?? null, spanId: record.spanId ?? null };
}

export function rowToParts(row: TurnRow, dictionary: TurnNames): TurnParts {
  const parts: TurnParts = { requestId: row.request_id };
  if (row.agent_version !== null || row.trace_id !== null || row.span_id !== null) {
    const origin: TurnOrigin = {};
    if (row.agent_version !== null) origin.agentVersion = row.agent_version;
    if (row.trace_id !== null) origin.traceId = row.trace_id;
    if (row.span_id !== null) origin.spanId = row.span_id;
    parts.origin = origin;
  }
  const stream = row.stream_id === null ? undefined : dictionary.streamById(row.stream_id);
  if (row.prefix_id !== null && stream && row.ts !== null) {
    const stored = dictionary.prefixOf(row.prefix_id);
    const prefix = row.message_hashes || row.message_markers ? { ...stored } : stored;
    if (row.message_hashes) prefix.messageHashes = decodeMessageHashes(row.message_hashes);
    const markers = row.message_markers ? storedJson<string[]>(row.message_markers) : undefined;
    if (Array.isArray(markers)) prefix.markers = [...(stored.markers ?? []), ...markers];
    const blocks = row.message_blocks && prefix.messageHashes ? storedJson<number[]>(row.message_blocks) : undefined;
    if (Array.isArray(blocks) && blocks.length === prefix.messageHashes!.length) prefix.messageBlockCounts = blocks;
    const chars = row.prefix_chars && prefix.messageHashes ? storedJson<number[]>(row.prefix_chars) : undefined;
    if (Array.isArray(chars) && chars.length === prefix.messageHashes!.length + 1) prefix.prefixChars = chars;
    parts.snapshot = {
      ts: row.ts,
      sessionId: stream.sessionId,
      agentId: stream.agentId,
      model: prefix.model,
      prefix,
    };
    const provider = dictionary.labelValue(row.snapshot_provider_id);
    if (provider !== undefined) parts.snapshot.provider = provider;
    if (row.expect_miss !== null) parts.snapshot.expectMiss = row.expect_miss;
    // The row keeps one origin, not which part named it: a stored snapshot's turn counts it the snapshot's.
    if (parts.origin) parts.snapshotNamed = ORIGIN_KEYS.filter((key) => parts.origin![key] !== undefined);
  }
  if (row.uncached !== null) {
    const write = row.write ?? 0;
    const usage: UsagePart = {
      usage: {
        uncached: row.uncached,
        read: row.read ?? 0,
        write,
        write1h: row.write_1h ?? 0,
        output: row.output ?? 0,
        cacheReported: row.cache_reported === 1,
        // Stored before the field was kept: a write is the only sign left of one.
        writeReported: row.write_reported === null ? write > 0 : row.write_reported === 1,
      },
    };
    const provider = dictionary.labelValue(row.usage_provider_id);
    if (provider !== undefined) usage.provider = provider;
    if (row.end_ts !== null) usage.ts = row.end_ts;
    if (row.ttft_ms !== null) usage.ttftMs = row.ttft_ms;
    if (!parts.snapshot && stream) {
      usage.sessionId = stream.sessionId;
      usage.agentId = stream.agentId;
    }
    const model = dictionary.labelValue(row.usage_model_id);
    if (model !== undefined) usage.model = model;
    const diagnostics = row.diagnostics === null ? undefined : storedJson(row.diagnostics);
    if (diagnostics !== undefined) usage.diagnostics = diagnostics;
    parts.usage = usage;
  }
  return parts;
}

export function stateIndex(state: TurnState): number {
  return TURN_STATES.indexOf(state);
}

export const MISS = stateIndex('miss');

/** What one evaluated turn adds to the rollups and to its stream's sums. */
export interface Contribution {
  streamId: number;
  projectId: number;
  minute: number;
  modelId: number;
  providerId: number;
  agentId: number;
  state: number;
  reason: string;
  sums: Sums;
}

export function contributionOf(
  turn: Turn,
  streamId: number,
  projectId: number,
  state: number | null,
  record: BreakRecord | null,
  dictionary: Names,
): Contribution | null {
  if (state === null || !turn.usage) return null;
  const usage = turn.usage;
  // Like the cache rate, the token sums of unreported usage hold only its input and output.
  const measured = usage.cacheReported;
  return {
    streamId,
    projectId,
    minute: Math.floor(turn.ts / 60_000),
    modelId: dictionary.label('model', turn.model),
    providerId: dictionary.label('provider', turn.provider),
    agentId: dictionary.label('agent', turn.agentId),
    state,
    reason: record?.reason ?? '',
    sums: {
      turns: 1,
      measured: measured ? 1 : 0,
      unmeasuredInput: measured ? 0 : usage.uncached + usage.read + usage.write,
      uncached: measured ? usage.uncached : 0,
      read: measured ? usage.read : 0,
      write: measured ? usage.write : 0,
      write1h: measured ? usage.write1h : 0,
      output: usage.output,
      breaks: record ? 1 : 0,
      missed: record?.missedCacheReadTokens ?? 0,
      extraCostMicroUsd: Math.round((record?.estimatedExtraCostUsd ?? 0) * 1_000_000),
      unpriced: record && record.estimatedExtraCostUsd === null ? 1 : 0,
    },
  };
}
