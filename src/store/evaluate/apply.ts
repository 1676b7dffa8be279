// Steps 2 and 3 of a write, whatever the store: evaluate a stream's turns in
// order with the core, then turn the evaluation into row changes (through a
// store's sink) and into exact changes of rollups and stream sums (subtract
// what a turn counted before, add what it counts now).
import { readyAtOf, type History } from '../../core/history.js';
import { toTurn, type TurnParts } from '../../core/join.js';
import type { DetectionOptions } from '../../core/options.js';
import { isMessageMarker } from '../../core/prefix.js';
import { evaluateOrdered, type Compaction, type StreamEvaluation } from '../../core/stream.js';
import { TURN_STATES, type BreakRecord, type Turn } from '../../core/types.js';
import { SUM_KEYS, type Sums } from '../schema.js';
import { contributionOf, encodeMessageHashes, rowToParts, stateIndex, type Contribution, type TurnRow } from '../sqlite/rows.js';
import type { ObservedTurn } from '../store.js';
import { GapDeltas, GapMeter, sameGap, storedGap, type GapColumns } from './gaps.js';
import type { Names } from './names.js';
import type { Slot } from './plan.js';
import type { Staged } from './staging.js';

/** What one write did: what changed, for logs and counters. */
export interface Changes {
  breaks: { projectId: number; record: BreakRecord }[];
  revisedBreaks: { projectId: number; record: BreakRecord }[];
  /** Breaks a late event (or new rules) showed were none. */
  droppedBreaks: number;
  observed: { projectId: number; turn: ObservedTurn }[];
}

/** How a store writes what an evaluation changed, in the write's transaction. */
export interface RowSink {
  /** Writes a staged turn (new or changed) with its state and gap; returns its id. */
  store(staged: Staged, state: number | null, tiers: number | null, gap: GapColumns): number;
  /** Sets a stored turn's state and gap (the columns evaluation computes). */
  setState(id: number, state: number | null, tiers: number | null, gap: GapColumns): void;
  putBreak(id: number, streamId: number, ts: number, contribution: Contribution, record: BreakRecord): void;
  dropBreak(id: number): void;
  /** The break record stored for a row in state miss. */
  storedBreak(row: TurnRow): BreakRecord | null;
}

/** Evaluates a stream's turns after `history` and writes what changed. */
export function applyEvaluation(
  projectId: number,
  streamId: number,
  evaluation: { history: History; list: readonly Slot[] },
  compactions: readonly Compaction[],
  options: DetectionOptions,
  names: Names,
  sink: RowSink,
  deltas: Deltas,
  changes: Changes,
  written: Set<Staged>,
): void {
  const { history, list } = evaluation;
  // Before evaluation folds the list into it: the turn the first gap is measured from.
  const gaps = new GapMeter(history);
  const evaluations = new Map<string, StreamEvaluation>();
  const turns = list.map((slot) => slot.turn);
  for (const e of evaluateOrdered(history, turns, options, compactions)) evaluations.set(e.requestId, e);
  for (const slot of list) {
    const evaluation = evaluations.get(slot.turn.requestId);
    const state = evaluation ? stateIndex(evaluation.state) : null;
    const tiers = evaluation?.writerTiers ?? null;
    const record = evaluation?.break ?? null;
    const stored = slot.row;
    const storedBreak = stored?.state === MISS_STATE ? sink.storedBreak(stored) : null;
    const breakChanged = JSON.stringify(storedBreak) !== JSON.stringify(record);
    const gap = gaps.next(slot.turn, state);
    deltas.flight(streamId, slot.turn);
    if (!slot.staged && state === stored?.state && tiers === stored.tiers && !breakChanged && sameGap(gap, storedGap(stored))) continue;

    const before = stored ? contributionOfRow(stored, projectId, storedBreak, names) : null;
    const after = contributionOf(slot.turn, streamId, projectId, state, record, names);
    deltas.add(before, -1);
    deltas.add(after, 1);
    if (before) deltas.gaps.add(before, stored!.ts!, storedGap(stored!), stored!.write ?? 0, stored!.write_1h ?? 0, -1);
    if (after) deltas.gaps.add(after, slot.turn.ts, gap, slot.turn.usage!.write, slot.turn.usage!.write1h, 1);
    if (state !== null && (stored?.state ?? null) === null) changes.observed.push({ projectId, turn: observedTurn(slot.turn, state) });

    let id: number;
    if (slot.staged) {
      id = sink.store(slot.staged, state, tiers, gap);
      written.add(slot.staged);
    } else {
      id = stored!.id;
      sink.setState(id, state, tiers, gap);
    }
    if (breakChanged) {
      if (record && after) {
        sink.putBreak(id, streamId, slot.turn.ts, after, record);
        (storedBreak ? changes.revisedBreaks : changes.breaks).push({ projectId, record });
      } else {
        sink.dropBreak(id);
        changes.droppedBreaks++;
      }
    }
  }
}

const MISS_STATE = stateIndex('miss');

/** Whether what evaluation computes of a turn (state, tiers, gap) differs from what its row holds. */
export function evaluatedChanged(row: TurnRow, state: number | null, tiers: number | null, gap: GapColumns): boolean {
  return state !== row.state || tiers !== row.tiers || !sameGap(gap, storedGap(row));
}

function contributionOfRow(row: TurnRow, projectId: number, storedBreak: BreakRecord | null, names: Names): Contribution | null {
  if (row.state === null || row.stream_id === null) return null;
  const turn = toTurn(rowToParts(row, names));
  return turn ? contributionOf(turn, row.stream_id, projectId, row.state, storedBreak, names) : null;
}

function observedTurn(turn: Turn, state: number): ObservedTurn {
  const usage = turn.usage!;
  return {
    model: turn.model ?? '',
    provider: turn.provider ?? '',
    state: TURN_STATES[state]!,
    tokens: usage.cacheReported
      ? { uncached: usage.uncached, read: usage.read, write: usage.write, write1h: usage.write1h, output: usage.output }
      : { uncached: usage.uncached + usage.read + usage.write, read: 0, write: 0, write1h: 0, output: usage.output },
  };
}

/** The snapshot columns of a turn row: prefix_id, snapshot_provider_id, expect_miss, message_hashes, message_markers, message_blocks, prefix_chars. */
export function snapshotColumns(
  snapshot: TurnParts['snapshot'],
  names: Names,
): [number | null, number | null, string | null, Buffer | null, string | null, string | null, string | null] {
  if (!snapshot) return [null, null, null, null, null, null, null];
  const { messageHashes: messages, messageBlockCounts: blocks, prefixChars: chars } = snapshot.prefix;
  const markers = snapshot.prefix.markers?.filter(isMessageMarker) ?? [];
  return [
    names.prefix(snapshot.prefix),
    snapshot.provider === undefined ? null : names.label('provider', snapshot.provider),
    snapshot.expectMiss ?? null,
    messages ? encodeMessageHashes(messages) : null,
    markers.length > 0 ? JSON.stringify(markers) : null,
    blocks ? JSON.stringify(blocks) : null,
    chars ? JSON.stringify(chars) : null,
  ];
}

/**
 * The usage columns of a turn row: end_ts, ttft_ms, usage_provider_id,
 * usage_model_id, uncached, read, write, write_1h, output, cache_reported,
 * write_reported (0/1), diagnostics.
 */
export type UsageColumns = [
  number | null, number | null, number | null, number | null, number | null, number | null, number | null,
  number | null, number | null, number | null, number | null, string | null,
];

export function usageColumns(usagePart: TurnParts['usage'], names: Names): UsageColumns {
  if (!usagePart) return [null, null, null, null, null, null, null, null, null, null, null, null];
  const usage = usagePart.usage;
  return [
    usagePart.ts ?? null,
    usagePart.ttftMs ?? null,
    names.label('provider', usagePart.provider),
    usagePart.model === undefined ? null : names.label('model', usagePart.model),
    usage.uncached, usage.read, usage.write, usage.write1h, usage.output,
    usage.cacheReported ? 1 : 0,
    usage.writeReported ? 1 : 0,
    usagePart.diagnostics === undefined ? null : JSON.stringify(usagePart.diagnostics),
  ];
}

interface Keyed {
  key: (number | string)[];
  sums: Sums;
}

/** A stream's change: sums to add, first/last seen to widen to (null: none), longest flight to widen to. */
export interface StreamChange {
  id: number;
  sums: Sums;
  first: number | null;
  last: number | null;
  flight: number;
}

/** The columns of a rollup key, in order. */
export const ROLLUP_KEY = ['project_id', 'minute', 'model_id', 'provider_id', 'agent_id', 'state', 'reason'] as const;

/** Changes to sums, grouped so that each key is written once per write. */
export class Deltas {
  private readonly rollups = new Map<string, Keyed>();
  /** gap_rollups changes. */
  readonly gaps = new GapDeltas();
  private readonly streams = new Map<number, { sums: Sums; first: number; last: number; flight: number }>();

  add(contribution: Contribution | null, sign: 1 | -1): void {
    if (!contribution) return;
    const c = contribution;
    accumulate(this.rollups, [c.projectId, c.minute, c.modelId, c.providerId, c.agentId, c.state, c.reason], c.sums, sign);
    const stream = this.streamEntry(c.streamId);
    for (const k of SUM_KEYS) stream.sums[k] += sign * c.sums[k];
  }

  /** Widens a stream's first/last seen to the turns just evaluated. */
  span(streamId: number, list: readonly Slot[]): void {
    if (list.length === 0) return;
    const entry = this.streamEntry(streamId);
    entry.first = Math.min(entry.first, list[0]!.turn.ts);
    entry.last = Math.max(entry.last, list.at(-1)!.turn.ts);
  }

  /** Widens a stream's longest time to become readable to a turn just stored. */
  flight(streamId: number, turn: Turn): void {
    const readyAt = readyAtOf(turn);
    if (readyAt === undefined) return;
    const entry = this.streamEntry(streamId);
    entry.flight = Math.max(entry.flight, readyAt - turn.ts);
  }

  private streamEntry(id: number) {
    let entry = this.streams.get(id);
    if (!entry) this.streams.set(id, (entry = { sums: emptySums(), first: Infinity, last: -Infinity, flight: 0 }));
    return entry;
  }

  /** The rollup keys whose sums change (ROLLUP_KEY order), with the change. */
  *rollupChanges(): Generator<Keyed> {
    for (const keyed of this.rollups.values()) if (!isZero(keyed.sums)) yield keyed;
  }

  /** The streams that change. */
  *streamChanges(): Generator<StreamChange> {
    for (const [id, { sums, first, last, flight }] of this.streams) {
      if (isZero(sums) && first === Infinity && flight === 0) continue;
      yield { id, sums, first: first === Infinity ? null : first, last: last === -Infinity ? null : last, flight };
    }
  }
}

function emptySums(): Sums {
  const sums = {} as Sums;
  for (const k of SUM_KEYS) sums[k] = 0;
  return sums;
}

function accumulate(into: Map<string, Keyed>, key: (number | string)[], sums: Sums, sign: 1 | -1): void {
  const id = key.join('\u0000');
  let entry = into.get(id);
  if (!entry) into.set(id, (entry = { key, sums: emptySums() }));
  for (const k of SUM_KEYS) entry.sums[k] += sign * sums[k];
}

/** The sums in SUM_KEYS order. */
export function sumValues(sums: Sums): number[] {
  return SUM_KEYS.map((k) => sums[k]);
}

function isZero(sums: Sums): boolean {
  return SUM_KEYS.every((k) => sums[k] === 0);
}
