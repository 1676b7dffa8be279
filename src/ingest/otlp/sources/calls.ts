// Gemini CLI and Qwen Code log each model call as two records: `api_request`
// (the request's messages, as request_text) before the call, and
// `api_response` (the usage) after it. Neither names an id the other
// carries. They share the stream (session, role or agent, prompt id), and
// the request record is written as the call starts, when the response
// record's duration says it started: within a stream, calls follow one
// another, so each response pairs with the request of its stream that
// started closest to it. The two records are the two halves of a join
// (halves.ts), paired by stream and start time: in the store, whichever node
// receives them, each waits under its stream and the second of time its
// call started, and looks for the other under that second and the two
// around it.
//
// The rest of a call's prefix (system and tools) comes from a span, from the
// harness's trace exporter, which may reach another node: the call (its
// place and message hashes, from the logs) and the span's prefix are the two
// halves of a join on the span's ids (Gemini CLI) or the response id (Qwen
// Code), paired through the store like Claude Code's bodies. The logs'
// snapshot is emitted at once, and the join's, whole, when the span's half
// is there: the store keeps the more complete one (core/join.ts).
import type { CacheEvent } from '../../../core/types.js';
import type { CallPart, KnownCall, MappingContext, Pending, RequestHalf, Timed } from './context.js';
import { snapshotEvent } from './events.js';
import { inMemory, type Half, type Joined } from './halves.js';
import { combine, type Prefix } from './prefix.js';

/** How far apart a call's request record and its response's start can be (the time to serialise the request). */
const PAIRING_MS = 1_000;
/**
 * Halves kept per stream, oldest dropped first: a request that failed (each
 * retry too) never gets its response, and each half holds its message hashes.
 */
const MAX_WAITING = 4;

/** The index of the half that started closest to `at`, within PAIRING_MS; -1 when none is. */
function nearest(waiting: readonly Timed<unknown>[], at: number): number {
  let best = -1;
  waiting.forEach((half, i) => {
    const distance = Math.abs(half.at - at);
    if (distance <= PAIRING_MS && (best < 0 || distance < Math.abs(waiting[best]!.at - at))) best = i;
  });
  return best;
}

/** The half of `key`'s stream that started closest to `at`, removed; undefined when none is within PAIRING_MS. */
function takeNearest<T>(table: Pending<Timed<T>[]>, key: string, at: number): T | undefined {
  const waiting = table.peek(key);
  if (waiting === undefined) return undefined;
  const found = nearest(waiting, at);
  if (found < 0) return undefined;
  table.take(key);
  const rest = waiting.filter((_, i) => i !== found);
  if (rest.length > 0) table.set(key, rest);
  return waiting[found]!.value;
}

function wait<T>(table: Pending<Timed<T>[]>, key: string, half: Timed<T>): void {
  const waiting = table.peek(key) ?? [];
  // An export sent again brings the same record again.
  if (waiting.some((other) => other.id === half.id)) return;
  table.set(key, [...waiting, half].slice(-MAX_WAITING));
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
    join: (fromSpan) => ({ events: emit(call, combine(fromSpan as Prefix, call.prefix)), halves: [] }),
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
    join: (call) => ({ events: emit(call as CallPart, combine(prefix, (call as CallPart).prefix)), halves: [] }),
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

/** Where a log record's half waits in the store: its stream and the second (PAIRING_MS) its call started in. */
function recordKey(stream: string, second: number): string {
  return JSON.stringify(['record', stream, second]);
}

/**
 * A log record's half of its call, which pairs with the other record of its
 * stream that started closest to it, within PAIRING_MS. In the store it waits
 * under its stream and second, and looks under that second and the two
 * around it, which hold every start within PAIRING_MS. One record of each
 * kind waits per stream and second: the calls of a stream follow one
 * another, and a record sent again replaces itself.
 */
function recordHalf<Mine, Theirs>(
  kind: 'request_halves' | 'response_halves',
  stream: string,
  mine: Timed<Mine>,
  tables: { mine: Pending<Timed<Mine>[]>; theirs: Pending<Timed<Theirs>[]> },
  join: (other: Theirs) => Joined,
  unpaired?: () => Joined,
): Half {
  const second = Math.floor(mine.at / PAIRING_MS);
  return {
    key: recordKey(stream, second),
    kind,
    value: mine,
    partnerKeys: [second - 1, second, second + 1].map((s) => recordKey(stream, s)),
    choose: (waiting) => nearest(waiting as Timed<Theirs>[], mine.at),
    join: (other) => join((other as Timed<Theirs>).value),
    ...(unpaired ? { unpaired } : {}),
    pairInMemory() {
      const other = takeNearest(tables.theirs, stream, mine.at);
      if (other !== undefined) return inMemory(join(other));
      wait(tables.mine, stream, mine);
      return unpaired ? inMemory(unpaired()) : [];
    },
  };
}

/** A request record, at its stream `key`, made at `at`: it waits for its call's response record. */
export function requestRecord(context: MappingContext, key: string, at: number, half: RequestHalf, spanJoin: SpanJoin): Joined {
  const tables = { mine: context.requestHalves, theirs: context.responseHalves };
  return { events: [], halves: [recordHalf('request_halves', key, { at, id: half.id, value: half }, tables, (call: KnownCall) => known(context, call, half, spanJoin))] };
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
  const tables = { mine: context.responseHalves, theirs: context.requestHalves };
  const half = recordHalf(
    'response_halves',
    key,
    { at: call.startMs, id: call.requestId, value: call },
    tables,
    (request: RequestHalf) => known(context, call, request, spanJoin),
    () => known(context, call, undefined, spanJoin),
  );
  return { events: [], halves: [half] };
}
