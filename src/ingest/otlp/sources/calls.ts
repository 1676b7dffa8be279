// Gemini CLI and Qwen Code log each model call as two records: `api_request`
// (the request's messages, as request_text) before the call, and
// `api_response` (the usage) after it. Neither names an id the other
// carries. They share the stream (session, role or agent, prompt id), and
// the request record is written as the call starts, when the response
// record's duration says it started: within a stream, calls follow one
// another, so each response pairs with the request of its stream that
// started closest to it. A call's prefix can come in parts from several
// records (messages from the request record, system and tools from a span);
// each part completes the call's snapshot, emitted whole again, which the
// store keeps over the less complete one.
import type { CacheEvent } from '../../../core/types.js';
import type { KnownCall, MappingContext, Pending, RequestHalf, SnapshotParts, Timed } from './context.js';
import { snapshotEvent } from './events.js';
import { combine, type Prefix } from './prefix.js';

/** How far apart a call's request record and its response's start can be (the time to serialise the request). */
const PAIRING_MS = 1_000;
/**
 * Halves kept per stream, oldest dropped first: a request that failed (each
 * retry too) never gets its response, and each half holds its message hashes.
 */
const MAX_WAITING = 4;

/** The half of `key`'s stream that started closest to `at`, removed; undefined when none is within PAIRING_MS. */
function takeNearest<T>(table: Pending<Timed<T>[]>, key: string, at: number): T | undefined {
  const waiting = table.peek(key);
  if (waiting === undefined) return undefined;
  let best: Timed<T> | undefined;
  for (const half of waiting) {
    const distance = Math.abs(half.at - at);
    if (distance <= PAIRING_MS && (best === undefined || distance < Math.abs(best.at - at))) best = half;
  }
  if (best === undefined) return undefined;
  table.take(key);
  const rest = waiting.filter((half) => half !== best);
  if (rest.length > 0) table.set(key, rest);
  return best.value;
}

function wait<T>(table: Pending<Timed<T>[]>, key: string, half: Timed<T>): void {
  const waiting = table.peek(key) ?? [];
  // An export sent again brings the same record again.
  if (waiting.some((other) => other.id === half.id)) return;
  table.set(key, [...waiting, half].slice(-MAX_WAITING));
}

/**
 * Adds a part to a call's prefix; once the call's place is known (from its
 * usage record, the one record that always places it the same way), emits
 * its snapshot with every part so far.
 */
export function addParts(context: MappingContext, requestId: string, place: SnapshotParts['place'], part: Prefix): CacheEvent[] {
  const known = context.snapshotParts.peek(requestId);
  const parts: SnapshotParts = { place: place ?? known?.place, prefix: known === undefined ? part : combine(known.prefix, part) };
  context.snapshotParts.set(requestId, parts);
  if (parts.place === undefined || Object.keys(parts.prefix).length === 0) return [];
  const { model, ...where } = parts.place;
  return [snapshotEvent(where, { ...parts.prefix, model })];
}

function placeOf(call: KnownCall): SnapshotParts['place'] {
  if (call.model === undefined) return undefined;
  const { requestId, sessionId, agentId, provider, model, startMs } = call;
  return { requestId, sessionId, agentId, provider, model, ts: startMs };
}

/** A call and its request record: the messages, and the prefix of the span the request was made in. */
function paired(context: MappingContext, call: KnownCall, half: RequestHalf): CacheEvent[] {
  let part: Prefix = half.messageHashes === undefined ? {} : { messageHashes: half.messageHashes };
  if (half.spanKey !== undefined) {
    const fromSpan = context.spanPrefixes.take(half.spanKey);
    if (fromSpan === undefined) context.spanCalls.set(half.spanKey, call.requestId);
    else part = combine(fromSpan, part);
  }
  return addParts(context, call.requestId, placeOf(call), part);
}

/** A request record, at its stream `key`, made at `at`. */
export function requestRecord(context: MappingContext, key: string, at: number, half: RequestHalf): CacheEvent[] {
  const call = takeNearest(context.responseHalves, key, at);
  if (call !== undefined) return paired(context, call, half);
  wait(context.requestHalves, key, { at, id: half.id, value: half });
  return [];
}

/** A call known from its response record, at its stream `key`. */
export function responseRecord(context: MappingContext, key: string, call: KnownCall): CacheEvent[] {
  const half = takeNearest(context.requestHalves, key, call.startMs);
  if (half !== undefined) return paired(context, call, half);
  wait(context.responseHalves, key, { at: call.startMs, id: call.requestId, value: call });
  // Placed now: parts that came first (a span's) are emitted, and later ones will be.
  return addParts(context, call.requestId, placeOf(call), {});
}

/** The prefix a span carries, for the call its request record was made in. */
export function spanPrefix(context: MappingContext, spanKey: string, prefix: Prefix): CacheEvent[] {
  const requestId = context.spanCalls.take(spanKey);
  if (requestId !== undefined) return addParts(context, requestId, undefined, prefix);
  context.spanPrefixes.set(spanKey, prefix);
  return [];
}
