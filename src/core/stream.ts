// Stream evaluation (SPEC §4.11): the states and breaks of a stream depend only
// on its set of turns (and, for the main stream, its session's compactions),
// never on the order or repetition of their events.
import { judge, type MeasuredTurn } from './detect.js';
import { baselineOf, compareTurns, emptyHistory, familyOf, fold, type History } from './history.js';
import { byCodePoint } from './hash.js';
import { mergeEvent, toTurn, type TurnParts } from './join.js';
import type { DetectionOptions } from './options.js';
import type { Tiers } from './retention.js';
import type { CacheEvent, Evaluation, Turn } from './types.js';

export { compareTurns } from './history.js';

/** The version of SPEC §4's rules this core implements: data evaluated under another is evaluated again. */
export const RULES_VERSION = 4;

/** The stream a harness's compaction requests go to (SPEC §4.9). */
export const COMPACT_AGENT = 'compact';
/** The stream whose next turn a compaction makes `expected`. */
export const MAIN_AGENT = 'main';

export function streamKeyOf(turn: Turn): string {
  return JSON.stringify([turn.sessionId, turn.agentId]);
}

/** The concurrent requests of the many turns that overlapped nothing. */
const NONE: readonly string[] = Object.freeze([]);

/** A turn of the session's compact stream: only when it started matters. */
export type Compaction = Pick<Turn, 'ts' | 'requestId'>;

/** An evaluation, with the TTL tiers of the stream's latest write after the turn: what resumes a history later. */
export type StreamEvaluation = Evaluation & { writerTiers: Tiers };

/**
 * Evaluates `ordered` (in stream order, all after the turns folded into
 * `history`), folding each into `history`. `compactions` are the session's
 * compaction turns (for the main stream), in stream order. This is the
 * incremental form: ingest passes the suffix from the earliest affected turn.
 */
export function evaluateOrdered(
  history: History,
  ordered: readonly Turn[],
  options: DetectionOptions,
  compactions: readonly Compaction[] = [],
): StreamEvaluation[] {
  const out: StreamEvaluation[] = [];
  let next = 0;
  for (const turn of ordered) {
    // A compaction between the previous turn and this one makes this one the first after it.
    while (next < compactions.length && history.last && compareTurns(compactions[next]!, history.last) <= 0) next++;
    let afterCompaction = false;
    while (next < compactions.length && compareTurns(compactions[next]!, turn) < 0) {
      afterCompaction = true;
      next++;
    }
    const family = familyOf(turn);
    const { baseline, concurrent } = baselineOf(history, turn, family);
    const judged = turn.usage ? judge(turn as MeasuredTurn, baseline, afterCompaction, options) : undefined;
    const writerTiers = fold(history, turn, family);
    if (!judged) continue;
    out.push({
      requestId: turn.requestId,
      state: judged.state,
      previousRequestId: baseline?.turn.requestId ?? null,
      concurrentRequestIds: concurrent.length === 0 ? NONE : concurrent.map((seen) => seen.turn.requestId),
      break: judged.break,
      writerTiers,
    });
  }
  return out;
}

/** Evaluates one stream's turns, given in any order. */
export function evaluateStream(
  turns: readonly Turn[],
  options: DetectionOptions,
  compactions: readonly Compaction[] = [],
): StreamEvaluation[] {
  return evaluateOrdered(emptyHistory(), [...turns].sort(compareTurns), options, [...compactions].sort(compareTurns));
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

/** A session's turns by stream, and the compactions its main stream follows. */
export function groupStreams(turns: Iterable<Turn>): { streams: Map<string, Turn[]>; compactionsOf: (stream: Turn[]) => Turn[] } {
  const streams = new Map<string, Turn[]>();
  for (const turn of turns) {
    const key = streamKeyOf(turn);
    const list = streams.get(key);
    if (list) list.push(turn);
    else streams.set(key, [turn]);
  }
  const compactionsOf = (stream: Turn[]) => {
    const first = stream[0];
    if (!first || first.agentId !== MAIN_AGENT) return [];
    return streams.get(JSON.stringify([first.sessionId, COMPACT_AGENT])) ?? [];
  };
  return { streams, compactionsOf };
}

/** The reference evaluation of a set of events: every stream, evaluated from scratch. */
export function evaluateEvents(events: Iterable<CacheEvent>, options: DetectionOptions): StreamEvaluation[] {
  const { streams, compactionsOf } = groupStreams(foldEvents(events));
  return [...streams.keys()].sort(byCodePoint).flatMap((key) => {
    const stream = streams.get(key)!;
    return evaluateStream(stream, options, compactionsOf(stream));
  });
}
