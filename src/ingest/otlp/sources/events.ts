// Builds the ingest contract's events (SPEC §2) from what a source read, and
// validates them with the same code as POST /v1/events, so an event from OTLP
// is held to exactly the rules of one sent as JSON.
import { hashValue } from '../../../core/hash.js';
import { resolveProvider } from '../../../core/usage.js';
import type { CacheEvent, SnapshotContent } from '../../../core/types.js';
import { toCacheEvent } from '../../http/events.js';
import { MappingError } from './source.js';

/** Normalised token counts (SPEC §3). An absent read and write means the cache was not reported. */
export interface Tokens {
  uncached: number;
  read?: number | undefined;
  write?: number | undefined;
  write1h?: number | undefined;
  output?: number | undefined;
}

/**
 * Counts whose input total INCLUDES the cache (OpenAI, Gemini, the OTel GenAI
 * conventions): the uncached part is what is left. A total below read + write
 * is clamped to 0 uncached, as core/usage.ts does.
 */
export function inclusive(total: number, parts: Omit<Tokens, 'uncached'>): Tokens {
  const { read, write, write1h, output } = parts;
  return { uncached: Math.max(0, total - (read ?? 0) - (write ?? 0)), read, write, write1h, output };
}

/** One model call as a source sees it. */
export interface Call {
  requestId: string;
  sessionId: string;
  agentId: string;
  provider: string;
  model?: string | undefined;
  /** Request start. */
  startMs: number;
  /** Response end. */
  endMs: number;
  /** Time to first token: when the call's cache entry became readable. */
  ttftMs?: number | undefined;
}

/**
 * A request id for a source that sends none: a hash of what identifies the
 * call, so the same record sent twice gets the same id (and is a duplicate).
 */
export function derivedRequestId(source: string, identity: readonly unknown[]): string {
  return `${source}:${hashValue(identity)}`;
}

/** A provider label: the canonical name when known (gen_ai.provider.name values included), else as sent. */
export function providerLabel(name: string): string {
  return resolveProvider(name) ?? name.trim().toLowerCase().slice(0, 64);
}

function tokenFields(tokens: Tokens): Record<string, number> {
  const fields: Record<string, number> = { uncachedInputTokens: tokens.uncached };
  if (tokens.read !== undefined) fields.cacheReadInputTokens = tokens.read;
  if (tokens.write !== undefined) fields.cacheWriteInputTokens = tokens.write;
  if (tokens.write1h !== undefined) fields.cacheWrite1hInputTokens = tokens.write1h;
  if (tokens.output !== undefined) fields.outputTokens = tokens.output;
  return fields;
}

function validated(json: Record<string, unknown>): CacheEvent {
  const result = toCacheEvent(json);
  if (!result.ok) throw new MappingError(`as a cachebreak event, ${result.error}`);
  return result.event;
}

export function usageEvent(call: Call, tokens: Tokens): CacheEvent {
  return validated({
    type: 'usage',
    requestId: call.requestId,
    sessionId: call.sessionId,
    agentId: call.agentId,
    ts: Math.floor(call.endMs),
    provider: call.provider,
    ...(call.model !== undefined ? { model: call.model } : {}),
    ...(call.ttftMs !== undefined ? { ttftMs: call.ttftMs } : {}),
    ...tokenFields(tokens),
  });
}

/** A call whose snapshot (at least its model) and usage are both known. */
function turnEvent(call: Call & { model: string }, snapshot: Omit<SnapshotContent, 'model'>, tokens: Tokens): CacheEvent {
  return validated({
    type: 'turn',
    requestId: call.requestId,
    sessionId: call.sessionId,
    agentId: call.agentId,
    ts: Math.floor(call.startMs),
    endTs: Math.floor(call.endMs),
    ...(call.ttftMs !== undefined ? { ttftMs: call.ttftMs } : {}),
    provider: call.provider,
    ...snapshot,
    model: call.model,
    ...tokenFields(tokens),
  });
}

export interface SnapshotPlace {
  requestId: string;
  sessionId: string;
  agentId: string;
  provider?: string;
  /** Request start. */
  ts: number;
}

export function snapshotEvent(place: SnapshotPlace, snapshot: SnapshotContent): CacheEvent {
  return validated({ type: 'snapshot', ...place, ts: Math.floor(place.ts), ...snapshot });
}

/** A call's usage event, or its turn event when the model is known (a model-only snapshot still names model changes). */
export function callEvent(call: Call, snapshot: Omit<SnapshotContent, 'model'>, tokens: Tokens): CacheEvent {
  return call.model === undefined ? usageEvent(call, tokens) : turnEvent({ ...call, model: call.model }, snapshot, tokens);
}
