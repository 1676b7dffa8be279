// Step 2's input, whatever the store: which streams a write evaluates and from
// where, the turns of each in order, and how far back its history is read.
import { modelFamily } from '../../core/family.js';
import { emptyHistory, fold, readyAtOf, type History } from '../../core/history.js';
import { toTurn } from '../../core/join.js';
import { COMPACT_AGENT, compareTurns, MAIN_AGENT, type Compaction } from '../../core/stream.js';
import type { Turn } from '../../core/types.js';
import { rowToParts, type TurnRow } from '../sqlite/rows.js';
import type { Names } from './names.js';
import type { Staged } from './staging.js';

/** A turn of an evaluated stream, with what is stored of it. */
export interface Slot {
  turn: Turn;
  row: TurnRow | undefined;
  staged: Staged | undefined;
}

export interface StreamPlan {
  /** Per stream, the staged turns that land in it. */
  landing: Map<number, Staged[]>;
  /** Per stream, the earliest time from which turns left it or a compaction before its turns changed. */
  changedFrom: Map<number, number>;
}

export interface PlanStore {
  names: Names;
  /** The id of a stream that exists, without creating it. */
  existingStream(projectId: number, sessionId: string, agentId: string): number | undefined;
  /** Hears of each compact stream a staged turn concerns (a cache of them may keep it). */
  compactStreamSeen?(projectId: number, sessionId: string, streamId: number): void;
}

/**
 * The streams to evaluate: where staged turns land, and from where on the
 * streams they left (or whose main stream a compaction precedes) change.
 */
export function planStreams(staged: Iterable<Staged>, store: PlanStore): StreamPlan {
  const landing = new Map<number, Staged[]>();
  const changedFrom = new Map<number, number>();
  const changed = (streamId: number, ts: number) => changedFrom.set(streamId, Math.min(changedFrom.get(streamId) ?? Infinity, ts));
  // A turn at `ts` in a session's compact stream changes its main stream from there on (SPEC §4.9).
  const compactionChanged = (streamId: number, ts: number) => {
    const stream = store.names.streamById(streamId);
    if (stream.agentId !== COMPACT_AGENT) return;
    store.compactStreamSeen?.(stream.projectId, stream.sessionId, streamId);
    const main = store.existingStream(stream.projectId, stream.sessionId, MAIN_AGENT);
    if (main !== undefined) changed(main, ts);
  };
  for (const s of staged) {
    if (s.streamId !== null && s.turn) {
      const list = landing.get(s.streamId);
      if (list) list.push(s);
      else landing.set(s.streamId, [s]);
      compactionChanged(s.streamId, s.turn.ts);
    }
    const row = s.row;
    if (row?.stream_id != null && row.ts !== null && (row.stream_id !== s.streamId || row.ts !== s.turn?.ts)) {
      changed(row.stream_id, row.ts);
      compactionChanged(row.stream_id, row.ts);
    }
  }
  return { landing, changedFrom };
}

/** The ids of the stored rows a write stages: read back from disk, they are replaced by their staged content. */
export function stagedIdsOf(staged: Iterable<Staged>): Set<number> {
  const ids = new Set<number>();
  for (const s of staged) if (s.row) ids.add(s.row.id);
  return ids;
}

/** The time from which a stream is evaluated again: its earliest change. */
export function evaluationStart(streamId: number, arriving: readonly Staged[], changedAt: number | undefined): number {
  let from = changedAt ?? Infinity;
  for (const s of arriving) {
    from = Math.min(from, s.turn!.ts);
    if (s.row?.stream_id === streamId && s.row.ts !== null) from = Math.min(from, s.row.ts);
  }
  return from;
}

export const bySlot = (a: Slot, b: Slot) => compareTurns(a.turn, b.turn);

/** The turns of a stream from its start on, in order: the arriving ones and the stored ones (`suffix`) they do not replace. */
export function slotsFrom(arriving: readonly Staged[], suffix: Iterable<TurnRow>, stagedIds: ReadonlySet<number>, names: Names): Slot[] {
  const list: Slot[] = arriving.map((s) => ({ turn: s.turn!, row: s.row, staged: s }));
  for (const row of suffix) {
    // A staged turn is in the list of the stream it now belongs to, with its new content.
    if (stagedIds.has(row.id)) continue;
    const turn = toTurn(rowToParts(row, names));
    if (turn) list.push({ turn, row, staged: undefined });
  }
  return list.sort(bySlot);
}

/**
 * The turns before `from` that the history of a stream needs, given its
 * stored turns before `from` newest first: read back only as far as the turns
 * from `from` on can look — past any turn that could still be in flight, and
 * to a turn every later one can read of each model family they use (and of
 * any family). `complete` is false when `before` ran out first.
 */
export function historyWindow(
  before: Iterable<TurnRow>,
  from: number,
  maxFlightMs: number,
  list: readonly Slot[],
  stagedIds: ReadonlySet<number>,
  names: Names,
): { window: Turn[]; complete: boolean } {
  // The families the turns from `from` on read (a turn of unknown model reads any: the latest of all).
  const families = new Set<string>();
  for (const slot of list) if (slot.turn.model !== undefined) families.add(modelFamily(slot.turn.model));
  const settledBy = from - maxFlightMs;
  const window: Turn[] = [];
  let readableFound = false;
  let complete = false;
  for (const row of before) {
    if (stagedIds.has(row.id)) continue;
    const turn = toTurn(rowToParts(row, names));
    if (!turn) continue;
    window.push(turn);
    const readyAt = readyAtOf(turn);
    if (turn.usage?.cacheReported && (readyAt === undefined || readyAt <= from)) {
      readableFound = true;
      // A turn of unknown model is of every family.
      if (turn.model === undefined) families.clear();
      else families.delete(modelFamily(turn.model));
    }
    if (turn.ts < settledBy && readableFound && families.size === 0) {
      complete = true;
      break;
    }
  }
  return { window: window.reverse(), complete };
}

/** The history after `window` (oldest first), seeded with the TTL tiers stored before its first turn. */
export function historyOf(window: readonly Turn[], seedTiers: number | null | undefined): History {
  const history = emptyHistory(seedTiers ?? 0);
  for (const turn of window) fold(history, turn);
  return history;
}

/**
 * The compaction turns a main stream's evaluation must know, in stream order:
 * the stored ones of its session's compact stream (`stored`, from the
 * history's last turn on) that this write does not replace, and the staged ones.
 */
export function compactionsOf(
  stored: Iterable<{ id: number; request_id: string; ts: number }>,
  compactStreamId: number,
  staged: Iterable<Staged>,
  stagedIds: ReadonlySet<number>,
): Compaction[] {
  const found: Compaction[] = [];
  for (const row of stored) if (!stagedIds.has(row.id)) found.push({ requestId: row.request_id, ts: row.ts });
  for (const s of staged) if (s.streamId === compactStreamId && s.turn) found.push(s.turn);
  return found.sort(compareTurns);
}

/** Whether a stream's evaluation needs its session's compactions: only a main stream's does. */
export function readsCompactions(names: Names, streamId: number): boolean {
  return names.streamById(streamId).agentId === MAIN_AGENT;
}
