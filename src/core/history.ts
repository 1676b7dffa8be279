// SPEC §4.2: which earlier turn a turn can read the cache of. A History is
// what a stream's earlier turns leave for the later ones: per model family the
// latest turn already answering before any later turn starts, the turns still
// in flight, and the TTL tiers of the latest write. It is built by folding
// turns in stream order, so that evaluating a stream's suffix needs only the
// History before it.
import { modelFamily } from './family.js';
import { byCodePoint } from './hash.js';
import { tiersOf, type Tiers } from './retention.js';
import type { Turn } from './types.js';

/** A turn as the later turns of its stream see it. */
export interface Seen {
  turn: Turn;
  /** undefined: the model is unknown, which matches any family (SPEC §4.12). */
  family: string | undefined;
  /** When its cache entry became readable: start + ttftMs, else its response end; undefined when neither is known. */
  readyAt: number | undefined;
  /** It has usage that reported cache fields: it can be a baseline. */
  candidate: boolean;
  /** The TTL tiers its prefix is held in (SPEC §4.5). */
  tiers: Tiers;
}

export interface History {
  /** Per family (UNKNOWN for no model), the latest candidate that every later turn can read (boxed: most turns replace it). */
  settled: Map<string, { seen: Seen }>;
  /** The latest of them all. */
  latest: Seen | undefined;
  /** Earlier turns some later turn might still find in flight, in stream order. */
  pending: Seen[];
  /** The tiers of the latest turn that wrote; 0 before any. */
  writer: Tiers;
  /** The last turn folded in. */
  last: Turn | undefined;
}

const UNKNOWN = '\u0000';

export function emptyHistory(writer: Tiers = 0): History {
  return { settled: new Map(), latest: undefined, pending: [], writer, last: undefined };
}

/** Stream order: request start, ties by requestId. */
export function compareTurns(a: Pick<Turn, 'ts' | 'requestId'>, b: Pick<Turn, 'ts' | 'requestId'>): number {
  return a.ts - b.ts || byCodePoint(a.requestId, b.requestId);
}

/** A request not answering an hour after it started is not waited for: later turns may read what it left. */
export const MAX_FLIGHT_MS = 60 * 60_000;

/**
 * Without a time to first token, how long after its start a request may
 * still count as before its first token. Its response end says when it
 * answered, but a usage's time may come from another clock than the
 * snapshot's start (a gateway's, minutes off): bounded so, such a skew
 * cannot make later requests look parallel. Longer than a first token takes
 * on all but the largest uncached prompts, shorter than most agent steps.
 */
export const MAX_UNTIMED_FLIGHT_MS = 10_000;

/**
 * When a turn's cache entry became readable: its start plus time to first
 * token; else its response end, but no earlier than its own start nor later
 * than MAX_UNTIMED_FLIGHT_MS after it (SPEC §4.12, clocks). A turn known
 * only from its usage starts, as far as is known, at its response end: it
 * was readable by then.
 */
export function readyAtOf(turn: Turn): number | undefined {
  if (turn.prefix !== undefined && turn.ttftMs !== undefined) return turn.ts + Math.min(turn.ttftMs, MAX_FLIGHT_MS);
  if (turn.endTs === undefined) return undefined;
  return Math.min(Math.max(turn.endTs, turn.ts), turn.ts + MAX_UNTIMED_FLIGHT_MS);
}

/** SPEC §4.2: `seen`'s cache entry existed when `turn` started. */
function available(seen: Seen, turn: Turn): boolean {
  return seen.readyAt === undefined ? seen.turn.ts < turn.ts : seen.readyAt <= turn.ts;
}

const later = (a: Seen | undefined, b: Seen) => (a === undefined || compareTurns(a.turn, b.turn) < 0 ? b : a);

export interface Baseline {
  baseline: Seen | undefined;
  /** Earlier turns not yet answering when the turn started, in stream order. */
  concurrent: Seen[];
}

const NONE: readonly Seen[] = Object.freeze([]);

/** A turn's model family; undefined when its model is unknown. */
export const familyOf = (turn: Turn) => (turn.model === undefined ? undefined : modelFamily(turn.model));

/** The baseline of `turn` (latest available of its family, else of any model) and the turns it overlapped. */
export function baselineOf(history: History, turn: Turn, family = familyOf(turn)): Baseline {
  // A turn of unknown model is of every family; so is a settled one.
  let any = history.latest;
  let same = family === undefined ? any : history.settled.get(family)?.seen;
  const unknown = history.settled.get(UNKNOWN);
  if (unknown !== undefined) same = later(same, unknown.seen);
  let concurrent = NONE as Seen[];
  for (const seen of history.pending) {
    if (!available(seen, turn)) {
      if (concurrent === NONE) concurrent = [];
      concurrent.push(seen);
    } else if (seen.candidate) {
      if (family === undefined || seen.family === undefined || seen.family === family) same = later(same, seen);
      any = later(any, seen);
    }
  }
  return { baseline: same ?? any, concurrent };
}

/** Adds `turn` (the next in stream order) to the history; returns the writer's tiers after it. */
export function fold(history: History, turn: Turn, family = familyOf(turn)): Tiers {
  const usage = turn.usage;
  let tiers: Tiers = 0;
  if (usage) {
    tiers = tiersOf(turn.prefix, usage, history.writer);
    if (usage.write > 0) history.writer = tiers;
  }
  // Whatever `turn` can read, every later turn can (they start no earlier).
  // Kept in place: a history owns its pending list (cloneHistory copies it).
  const pending = history.pending;
  let kept = 0;
  for (const seen of pending) {
    if (!available(seen, turn)) pending[kept++] = seen;
    else if (seen.candidate) settle(history, seen);
  }
  while (pending.length > kept) pending.pop(); // cheaper than setting length
  pending.push({ turn, family, readyAt: readyAtOf(turn), candidate: usage?.cacheReported === true, tiers });
  history.last = turn;
  return history.writer;
}

function settle(history: History, seen: Seen): void {
  const key = seen.family ?? UNKNOWN;
  const box = history.settled.get(key);
  if (box === undefined) history.settled.set(key, { seen });
  else box.seen = later(box.seen, seen);
  history.latest = later(history.latest, seen);
}

/** A copy that folding into does not change `history`. */
export function cloneHistory(history: History): History {
  const settled = new Map([...history.settled].map(([key, { seen }]) => [key, { seen }]));
  return { ...history, settled, pending: [...history.pending] };
}

/** Where each turn of one stream (given in stream order) reads from: its baseline, and the turns it overlapped. */
export function placements(ordered: readonly Turn[]): Map<string, { previousRequestId: string | null; concurrentRequestIds: string[] }> {
  const history = emptyHistory();
  const out = new Map<string, { previousRequestId: string | null; concurrentRequestIds: string[] }>();
  for (const turn of ordered) {
    const family = familyOf(turn);
    const { baseline, concurrent } = baselineOf(history, turn, family);
    out.set(turn.requestId, {
      previousRequestId: baseline?.turn.requestId ?? null,
      concurrentRequestIds: concurrent.map((seen) => seen.turn.requestId),
    });
    fold(history, turn, family);
  }
  return out;
}
