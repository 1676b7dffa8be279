// Claude Code's raw API bodies (OTEL_LOG_RAW_API_BODIES=1) → the full
// snapshot of each call: system and per-tool hashes, cache_control markers,
// message hashes. `api_request_body` carries the request JSON and a
// request_body_id but not the request id, which exists only once the response
// headers arrive; `api_response_body` names both. The two come in either
// order, possibly in different export requests and at different processes:
// the body is hashed and dropped on arrival, and only the hashes wait
// (bounded, in bytes too) for the other half, in the store when received
// over OTLP (halves.ts). A body cut by Claude Code's content limit still
// gives what it holds.
import { hashValue } from '../../../core/hash.js';
import { buildCutAnthropicSnapshot, buildSnapshot } from '../../../core/snapshot/index.js';
import type { CacheEvent, SnapshotContent } from '../../../core/types.js';
import { MAX_DEPTH, nestedDeeper } from '../../limits.js';
import type { LogRecord } from '../records.js';
import { count, eventTime, requireSession, text } from './attributes.js';
import type { MappingContext, PendingSnapshot } from './context.js';
import { snapshotEvent } from './events.js';
import type { Half } from './halves.js';
import { ignored, MappingError, type Outcome } from './source.js';

/** Session and request_body_id, as JSON: text that PostgreSQL stores whatever the ids hold (a NUL included). */
function joinKey(record: LogRecord, bodyId: string): string {
  return JSON.stringify([requireSession(record, record.attributes), bodyId]);
}

function emit(requestId: string, pending: PendingSnapshot): CacheEvent[] {
  const { snapshot, sessionId, agentId, provider, ts } = pending;
  return [snapshotEvent({ requestId, sessionId, agentId, provider, ts }, snapshot)];
}

/**
 * The body's snapshot. A body longer than Claude Code's content limit
 * (CLAUDE_CODE_OTEL_CONTENT_MAX_LENGTH, 61,440 characters by default) arrives
 * cut: what is whole before the cut makes a partial snapshot.
 */
function snapshotOf(record: LogRecord, model: string | undefined): SnapshotContent {
  const raw = record.attributes['body'];
  if (typeof raw !== 'string') throw new MappingError('body: expected the request as a JSON string');
  const options = model === undefined ? {} : { model };
  let body: unknown;
  try {
    body = JSON.parse(raw);
  } catch {
    const declared = count(record.attributes, 'body_length');
    // A body as long as it says it is was not cut, just not JSON.
    const cut = declared === raw.length ? undefined : buildCutAnthropicSnapshot(raw, options);
    if (cut === undefined) {
      const hint = declared !== undefined && declared !== raw.length ? ` (${raw.length} of ${declared} characters)` : '';
      throw new MappingError(`body: not valid JSON, nor the start of a JSON object cut short${hint}`);
    }
    if (!cut.ok) throw new MappingError(`body: ${cut.error}`);
    return cut.snapshot;
  }
  const built = buildSnapshot(body, 'anthropic', options);
  if (!built.ok) throw new MappingError(`body: ${built.error}`);
  return built.snapshot;
}

/**
 * The snapshot with thinking and tool_choice as hashes: they are compared by
 * hash only (core/prefix.ts), and as sent they can be of any size.
 */
function hashesOnly(snapshot: SnapshotContent): SnapshotContent {
  const { thinking, toolChoice, ...hashed } = snapshot;
  for (const [field, value] of [['thinking', thinking], ['tool_choice', toolChoice]] as const) {
    if (nestedDeeper(value)) throw new MappingError(`body.${field}: nested more than ${MAX_DEPTH} levels deep`);
  }
  if (thinking !== undefined) hashed.thinkingHash = hashValue(thinking);
  if (toolChoice !== undefined) hashed.toolChoiceHash = hashValue(toolChoice);
  return hashed;
}

export function requestBody(record: LogRecord, context: MappingContext, agentId: string): Outcome {
  const a = record.attributes;
  const bodyId = text(a, 'request_body_id');
  if (bodyId === undefined) throw new MappingError('request_body_id: required to match the body to its request');
  const pending: PendingSnapshot = {
    snapshot: hashesOnly(snapshotOf(record, text(a, 'model'))),
    sessionId: requireSession(record, a),
    agentId,
    provider: 'anthropic',
    ts: eventTime(record),
  };
  const key = joinKey(record, bodyId);
  const half: Half = {
    key,
    kind: 'claude_request_bodies',
    value: pending,
    join: (requestId) => ({ events: emit(requestId as string, pending), halves: [] }),
    pairInMemory() {
      const requestId = context.claudeRequestIds.take(key);
      if (requestId !== undefined) return emit(requestId, pending);
      context.claudeBodies.set(key, pending);
      return [];
    },
  };
  return { events: [], halves: [half] };
}

export function responseBody(record: LogRecord, context: MappingContext): Outcome {
  const a = record.attributes;
  const bodyId = text(a, 'request_body_id');
  const requestId = text(a, 'request_id');
  // Without both ids the request body cannot be given a request.
  if (bodyId === undefined || requestId === undefined) return ignored('no_request_id');
  const key = joinKey(record, bodyId);
  const half: Half = {
    key,
    kind: 'claude_request_ids',
    value: requestId,
    join: (pending) => ({ events: emit(requestId, pending as PendingSnapshot), halves: [] }),
    pairInMemory() {
      const pending = context.claudeBodies.take(key);
      if (pending !== undefined) return emit(requestId, pending);
      context.claudeRequestIds.set(key, requestId);
      return [];
    },
  };
  return { events: [], halves: [half] };
}
