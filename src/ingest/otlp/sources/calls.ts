// Gemini CLI and Qwen Code log each model call as two records: `api_request`
// (the request's messages, as request_text) before the call, and
// `api_response` (the usage) after it. Neither names an id the other
// carries. They share the stream (session, role or agent, prompt id), and
// the request record is written as the call starts, when the response
// record's duration says it started: within a stream, calls follow one
// another, so each response pairs with the request of its stream that
// started closest to it; both come from the harness's one log exporter, and
// the node that receives them pairs them in its memory.
//
// The rest of a call's prefix (system and tools) comes from a span, from the
// harness's trace exporter, which may reach another node: the call (its
// place and message hashes, from the logs) and the span's prefix are the two
// halves of a join on the span's ids (Gemini CLI) or the response id (Qwen
// Code), paired through the store like Claude Code's bodies (halves.ts). The
// logs' snapshot is emitted at once, and the join's, whole, when the span's
// half is there: the store keeps the more complete one (core/join.ts).
import type { CacheEvent } from '../../../core/types.js';
import type { CallPart, KnownCall, MappingContext, Pending, RequestHalf, Timed } from './context.js';
import { snapshotEvent } from './events.js';
import type { Half } from './halves.js';
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

/** What the records of a harness bring: events now, halves that wait for a span. */
export interface Joined {
  events: CacheEvent[];
  halves: Half[];
}

/** Names the span join of a call: the span's ids (from its request record) or the call's request id; undefined when there is none. */
export type SpanJoin = (call: KnownCall, request: RequestHalf | undefined) => string | undefined;

/** The key both halves of a span join share: never a Claude Code key (a pair of ids). */
export function spanJoinKey(harness: string, id: string): string {
  return JSON.stringify(['span', harness, id]);
}

function emit(call: CallPart, prefix: Prefix): CacheEvent[] {
  const { model, ...where } = call.place;
  return Object.keys(prefix).length === 0 ? [] : [snapshotEvent(where, { ...prefix, model })];
}

/** The logs' half of a span join: the call's place and message hashes. */
function callHalf(context: MappingContext, key: string, call: CallPart): Half {
  return {
    key,
    kind: 'span_calls',
    value: call,
    join: (fromSpan) => emit(call, combine(fromSpan as Prefix, call.prefix)),
    pairInMemory() {
      const fromSpan = context.spanPrefixes.take(key);
      if (fromSpan !== undefined) return emit(call, combine(fromSpan, call.prefix));
      context.spanCalls.set(key, call);
      return [];
    },
  };
}

/** The span's half of a span join: the prefix parts it carries. */
export function spanHalf(context: MappingContext, key: string, prefix: Prefix): Half {
  return {
    key,
    kind: 'span_prefixes',
    value: prefix,
    join: (call) => emit(call as CallPart, combine(prefix, (call as CallPart).prefix)),
    pairInMemory() {
      const call = context.spanCalls.take(key);
      if (call !== undefined) return emit(call, combine(prefix, call.prefix));
      context.spanPrefixes.set(key, prefix);
      return [];
    },
  };
}

function placeOf(call: KnownCall): CallPart['place'] | undefined {
  if (call.model === undefined) return undefined;
  const { requestId, sessionId, agentId, provider, model, startMs } = call;
  return { requestId, sessionId, agentId, provider, model, ts: startMs };
}

/** A call and what its logs know of its prefix (the request record's messages, when paired): their snapshot now, and the half that waits for its span. */
function known(context: MappingContext, call: KnownCall, request: RequestHalf | undefined, spanJoin: SpanJoin): Joined {
  const place = placeOf(call);
  if (place === undefined) return { events: [], halves: [] };
  const part: CallPart = { place, prefix: request?.messageHashes === undefined ? {} : { messageHashes: request.messageHashes } };
  const key = spanJoin(call, request);
  return { events: emit(part, part.prefix), halves: key === undefined ? [] : [callHalf(context, key, part)] };
}

/** A request record, at its stream `key`, made at `at`. */
export function requestRecord(context: MappingContext, key: string, at: number, half: RequestHalf, spanJoin: SpanJoin): Joined {
  const call = takeNearest(context.responseHalves, key, at);
  if (call !== undefined) return known(context, call, half, spanJoin);
  wait(context.requestHalves, key, { at, id: half.id, value: half });
  return { events: [], halves: [] };
}

/**
 * A call known from its response record, at its stream `key`. Without its
 * request record yet, it still joins its span when the join needs no more
 * (Qwen Code's response id); the request record, when it comes, sends the
 * call's half again with its messages, which replaces the one still waiting.
 * (Had the span taken it already, the turn keeps the span's parts over the
 * messages: a request record logged after its own response record's export
 * is not something one log exporter does.)
 */
export function responseRecord(context: MappingContext, key: string, call: KnownCall, spanJoin: SpanJoin): Joined {
  const half = takeNearest(context.requestHalves, key, call.startMs);
  if (half !== undefined) return known(context, call, half, spanJoin);
  wait(context.responseHalves, key, { at: call.startMs, id: call.requestId, value: call });
  return known(context, call, undefined, spanJoin);
}
