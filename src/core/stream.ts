// Stream evaluation (SPEC §4.8): the states and breaks of a stream depend only
// on its set of turns, never on the order or repetition of their events.
import { evaluateTurn, type MeasuredTurn } from './detect.js';
import { byCodePoint } from './hash.js';
import { mergeEvent, toTurn, type TurnParts } from './join.js';
import type { DetectionOptions } from './options.js';
import type { CacheEvent, Evaluation, Turn } from './types.js';

/** Stream order: request start, ties by requestId. */
export function compareTurns(a: Turn, b: Turn): number {
  return a.ts - b.ts || byCodePoint(a.requestId, b.requestId);
}

export function streamKeyOf(turn: Turn): string {
  return JSON.stringify([turn.sessionId, turn.agentId]);
}

/**
 * Evaluates `ordered` (already in stream order), given the latest turn with
 * usage that precedes it. This is the incremental form: ingest passes only the
 * suffix from the earliest affected turn.
 */
export function evaluateOrdered(
  previous: MeasuredTurn | undefined,
  ordered: readonly Turn[],
  options: DetectionOptions,
): Evaluation[] {
  const out: Evaluation[] = [];
  let last = previous;
  for (const turn of ordered) {
    if (!turn.usage) continue;
    const measured = turn as MeasuredTurn;
    out.push(evaluateTurn(last, measured, options));
    last = measured;
  }
  return out;
}

/** Evaluates one stream's turns, given in any order. */
export function evaluateStream(turns: readonly Turn[], options: DetectionOptions): Evaluation[] {
  return evaluateOrdered(undefined, [...turns].sort(compareTurns), options);
}

/** Joins events (any order, any repetition) into turns; turns not yet placeable are left out. */
export function foldEvents(events: Iterable<CacheEvent>): Turn[] {
  const byRequest = new Map<string, TurnParts>();
  for (const event of events) {
    byRequest.set(event.requestId, mergeEvent(byRequest.get(event.requestId), event).parts);
  }
  const turns: Turn[] = [];
  for (const parts of byRequest.values()) {
    const turn = toTurn(parts);
    if (turn) turns.push(turn);
  }
  return turns;
}

/** The reference evaluation of a set of events: every stream, evaluated from scratch. */
export function evaluateEvents(events: Iterable<CacheEvent>, options: DetectionOptions): Evaluation[] {
  const streams = new Map<string, Turn[]>();
  for (const turn of foldEvents(events)) {
    const key = streamKeyOf(turn);
    const list = streams.get(key);
    if (list) list.push(turn);
    else streams.set(key, [turn]);
  }
  return [...streams.keys()].sort(byCodePoint).flatMap((key) => evaluateStream(streams.get(key)!, options));
}
