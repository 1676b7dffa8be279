// Ingest into SQLite, one transaction per call, in three steps:
// 1. join each event into its turn with the core's mergeEvent (in memory);
// 2. evaluate each touched stream once — from a cached history when the new
//    turns only append to it, else from its earliest affected turn, with the
//    history before that turn read back from disk;
// 3. write each row once, and apply the exact change to rollups and stream
//    sums (subtract what a turn counted before, add what it counts now).
import type Database from 'better-sqlite3';
import { getTableColumns } from 'drizzle-orm';
import { modelFamily } from '../../core/family.js';
import { cloneHistory, emptyHistory, fold, readyAtOf, type History } from '../../core/history.js';
import { GAP_BUCKETS, hasGap, ONE_HOUR, turnGap, type TurnGap } from '../../core/insights/ttl.js';
import { mergeEvent, toTurn, type TurnParts } from '../../core/join.js';
import type { DetectionOptions } from '../../core/options.js';
import { isMessageMarker } from '../../core/prefix.js';
import { COMPACT_AGENT, compareTurns, evaluateOrdered, MAIN_AGENT, type Compaction, type StreamEvaluation } from '../../core/stream.js';
import { TURN_STATES, type BreakRecord, type CacheEvent, type Turn } from '../../core/types.js';
import { rollups, SUM_KEYS, type Sums } from '../schema.js';
import type { BatchCounts, EventRejection, ExternalBreak, ObservedTurn, TailCheckpoint, TokenPoint } from '../store.js';
import { TailWriter } from './tail.js';
import { TokenPointWriter } from './token-points.js';
import type { Dictionary } from './dictionary.js';
import { Lru } from './lru.js';
import {
  contributionOf,
  encodeMessageHashes,
  MISS,
  rowToParts,
  stateIndex,
  storedJson,
  storedMessageHashes,
  ridOf,
  turnColumns,
  type Contribution,
  type TurnRow,
} from './rows.js';

/** One request's events, for one project. */
export interface WriterBatch {
  projectId: number;
  events: readonly CacheEvent[];
  tokenPoints?: readonly TokenPoint[] | undefined;
  externalBreaks?: readonly ExternalBreak[] | undefined;
  checkpoint?: TailCheckpoint | undefined;
}

/** What one write did: counts per batch, and what changed for logs and counters. */
export interface WriterOutcome {
  counts: BatchCounts[];
  breaks: { projectId: number; record: BreakRecord }[];
  revisedBreaks: { projectId: number; record: BreakRecord }[];
  /** Breaks a late event (or new rules) showed were none. */
  droppedBreaks: number;
  observed: { projectId: number; turn: ObservedTurn }[];
  externalBreaks: { projectId: number; record: ExternalBreak }[];
}

/** A turn this call changes. */
interface Staged {
  projectId: number;
  requestId: string;
  /** The stored row before this call; undefined for a new turn. */
  row: TurnRow | undefined;
  parts: TurnParts;
  snapshotChanged: boolean;
  usageChanged: boolean;
  streamId: number | null;
  turn: Turn | undefined;
}

/** What is known of a stream's end, so that appending to it needs no reads. */
interface StreamTail {
  /** The last turn of the stream in stream order (with or without usage). */
  last: Turn;
  /** The history after it: what whatever is appended is evaluated against. */
  history: History;
}

/** A turn of an evaluated stream, with what is stored of it. */
interface Slot {
  turn: Turn;
  row: TurnRow | undefined;
  staged: Staged | undefined;
}

const SUM_COLUMNS = SUM_KEYS.map((key) => getTableColumns(rollups)[key].name);
const ROLLUP_KEY = ['project_id', 'minute', 'model_id', 'provider_id', 'agent_id', 'state', 'reason'];
const GAP_KEY = ['project_id', 'hour', 'stream_id', 'model_id', 'provider_id', 'bucket'];
const GAP_SUMS = ['turns', 'stake', 'rewritten', 'written', 'written_1h'];

export class Writer {
  private readonly statements;
  private readonly tokenPoints: TokenPointWriter;
  private readonly tail: TailWriter;
  /** Streams active at once are far fewer; one evicted costs two reads when it next appends. */
  private readonly tails = new Lru<number, StreamTail>(10_000);
  /** Per session (project, sessionId), its compact stream or null: main-stream turns ask on every write. */
  private readonly compactStreams = new Lru<string, number | null>(10_000);
  /** SQLite's data_version after our last write: a change means another connection wrote. */
  private dataVersion = -1;
  /** Writes several requests' events in one transaction (one commit for all of them). */
  readonly write: (batches: readonly WriterBatch[]) => WriterOutcome;
  /** Evaluates streams again from their first turn, in one transaction (new rules or options). */
  readonly reevaluate: (streamIds: readonly number[]) => WriterOutcome;

  constructor(
    sqlite: Database.Database,
    private readonly dictionary: Dictionary,
    private readonly options: DetectionOptions,
  ) {
    const insertColumns = [
      'project_id', 'rid', 'request_id', 'stream_id', 'ts', 'prefix_id', 'snapshot_provider_id', 'expect_miss',
      'message_hashes', 'message_markers', 'end_ts', 'ttft_ms', 'usage_provider_id', 'usage_model_id', 'uncached',
      'read', 'write', 'write_1h', 'output', 'cache_reported', 'write_reported', 'diagnostics', 'state', 'tiers',
      'gap_bucket', 'gap_stake', 'gap_rewritten',
    ];
    this.statements = {
      find: sqlite.prepare<[number, number, string], TurnRow>(
        `SELECT ${turnColumns()} FROM turns WHERE rid = ? AND project_id = ? AND request_id = ?`,
      ),
      insert: sqlite.prepare(
        `INSERT INTO turns (${insertColumns.join(', ')}) VALUES (${insertColumns.map(() => '?').join(', ')})`,
      ),
      place: sqlite.prepare('UPDATE turns SET stream_id = ?, ts = ? WHERE id = ?'),
      setSnapshot: sqlite.prepare(
        `UPDATE turns SET prefix_id = ?, snapshot_provider_id = ?, expect_miss = ?, message_hashes = ?, message_markers = ?
         WHERE id = ?`,
      ),
      setUsage: sqlite.prepare(
        `UPDATE turns SET end_ts = ?, ttft_ms = ?, usage_provider_id = ?, usage_model_id = ?, uncached = ?, read = ?,
           write = ?, write_1h = ?, output = ?, cache_reported = ?, write_reported = ?, diagnostics = ? WHERE id = ?`,
      ),
      setState: sqlite.prepare('UPDATE turns SET state = ?, tiers = ?, gap_bucket = ?, gap_stake = ?, gap_rewritten = ? WHERE id = ?'),
      // Newest first: read back from a point only as far as the history before it needs.
      before: sqlite.prepare<[number, number], TurnRow>(
        `SELECT ${turnColumns()} FROM turns WHERE stream_id = ? AND ts < ? ORDER BY ts DESC, request_id DESC`,
      ),
      writerBefore: sqlite.prepare<[number, number, number, string], { tiers: number | null }>(
        `SELECT tiers FROM turns WHERE stream_id = ? AND uncached IS NOT NULL AND (ts < ? OR (ts = ? AND request_id < ?))
         ORDER BY ts DESC, request_id DESC LIMIT 1`,
      ),
      maxFlight: sqlite.prepare<[number], { max_flight_ms: number }>('SELECT max_flight_ms FROM streams WHERE id = ?'),
      suffix: sqlite.prepare<[number, number], TurnRow>(
        `SELECT ${turnColumns()} FROM turns WHERE stream_id = ? AND ts >= ? ORDER BY ts, request_id`,
      ),
      compactions: sqlite.prepare<[number, number], { id: number; request_id: string; ts: number }>(
        'SELECT id, request_id, ts FROM turns WHERE stream_id = ? AND ts >= ? ORDER BY ts, request_id',
      ),
      breakOf: sqlite.prepare<[number], { record: string }>('SELECT record FROM breaks WHERE turn_id = ?'),
      putBreak: sqlite.prepare(
        `INSERT OR REPLACE INTO breaks (turn_id, project_id, stream_id, ts, model_id, provider_id, agent_id, reason, record)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      dropBreak: sqlite.prepare('DELETE FROM breaks WHERE turn_id = ?'),
      rollup: sqlite.prepare(upsert('rollups', ROLLUP_KEY)),
      gapRollup: sqlite.prepare(
        `INSERT INTO gap_rollups (${[...GAP_KEY, ...GAP_SUMS].join(', ')}) VALUES (${[...GAP_KEY, ...GAP_SUMS].map(() => '?').join(', ')})
         ON CONFLICT (${GAP_KEY.join(', ')}) DO UPDATE SET ${GAP_SUMS.map((c) => `${c} = ${c} + excluded.${c}`).join(', ')}`,
      ),
      dropEmptyGapRollup: sqlite.prepare(`DELETE FROM gap_rollups WHERE ${GAP_KEY.map((c) => `${c} = ?`).join(' AND ')} AND turns = 0`),
      // A key whose turns all moved elsewhere is gone, not a row of zeros.
      dropEmptyRollup: sqlite.prepare(`DELETE FROM rollups WHERE ${ROLLUP_KEY.map((c) => `${c} = ?`).join(' AND ')} AND turns = 0`),
      stream: sqlite.prepare(
        `UPDATE streams SET
           first_ts = CASE WHEN first_ts IS NULL OR first_ts > :first THEN :first ELSE first_ts END,
           last_ts = CASE WHEN last_ts IS NULL OR last_ts < :last THEN :last ELSE last_ts END,
           max_flight_ms = max(max_flight_ms, :flight),
           ${SUM_COLUMNS.map((c, i) => `${c} = ${c} + :s${i}`).join(', ')}
         WHERE id = :id`,
      ),
      streamSpan: sqlite.prepare(
        `UPDATE streams SET first_ts = (SELECT min(ts) FROM turns WHERE stream_id = :id),
           last_ts = (SELECT max(ts) FROM turns WHERE stream_id = :id) WHERE id = :id`,
      ),
      dataVersion: sqlite.prepare<[], { data_version: number }>('PRAGMA data_version'),
    };
    this.tokenPoints = new TokenPointWriter(sqlite, dictionary);
    this.tail = new TailWriter(sqlite);
    this.write = sqlite.transaction((batches: readonly WriterBatch[]) => this.writeInTransaction(batches));
    this.reevaluate = sqlite.transaction((streamIds: readonly number[]) => this.reevaluateInTransaction(streamIds));
  }

  /** Forgets every cached stream tail (after a failed transaction, or a write by another connection). */
  forget(): void {
    this.tails.clear();
    this.compactStreams.clear();
    this.dataVersion = -1;
  }

  private writeInTransaction(batches: readonly WriterBatch[]): WriterOutcome {
    const version = this.statements.dataVersion.get()!.data_version;
    if (version !== this.dataVersion) {
      this.tails.clear();
      this.compactStreams.clear();
      this.dictionary.forget();
      this.dataVersion = version;
    }

    const staged = new Map<string, Staged>();
    const counts: WriterOutcome['counts'] = batches.map((batch) => this.stage(batch, staged));
    for (const batch of batches) if (batch.tokenPoints) this.tokenPoints.write(batch.projectId, batch.tokenPoints);
    const external = this.writeTail(batches, counts);

    // Streams to evaluate: where staged turns land, and from where on the
    // streams they left (or whose main stream a compaction precedes) change.
    const landing = new Map<number, Staged[]>();
    const changedFrom = new Map<number, number>();
    const changed = (streamId: number, ts: number) => changedFrom.set(streamId, Math.min(changedFrom.get(streamId) ?? Infinity, ts));
    for (const s of staged.values()) {
      if (s.streamId !== null && s.turn) {
        const list = landing.get(s.streamId);
        if (list) list.push(s);
        else landing.set(s.streamId, [s]);
        this.compactionChanged(s.streamId, s.turn.ts, changed);
      }
      const row = s.row;
      if (row?.stream_id != null && row.ts !== null && (row.stream_id !== s.streamId || row.ts !== s.turn?.ts)) {
        changed(row.stream_id, row.ts);
        this.compactionChanged(row.stream_id, row.ts, changed);
      }
    }

    const stagedIds = new Set<number>();
    for (const s of staged.values()) if (s.row) stagedIds.add(s.row.id);
    const deltas = new Deltas();
    const result: WriterOutcome = { counts, breaks: [], revisedBreaks: [], droppedBreaks: 0, observed: [], externalBreaks: external };
    const written = new Set<Staged>();
    for (const streamId of new Set([...landing.keys(), ...changedFrom.keys()])) {
      const arriving = landing.get(streamId) ?? [];
      const evaluation = this.slotsOf(streamId, arriving, changedFrom.get(streamId), stagedIds);
      const compactions = this.compactionsOf(streamId, evaluation.history, staged, stagedIds);
      this.apply(this.dictionary.streamById(streamId).projectId, streamId, evaluation, compactions, deltas, result, written);
      deltas.span(streamId, evaluation.list);
    }
    // Turns that no stream holds yet (a usage waiting for its snapshot) are stored as they are.
    for (const s of staged.values()) if (!written.has(s)) this.store(s, null, null);

    deltas.apply(this.statements);
    for (const streamId of changedFrom.keys()) this.statements.streamSpan.run({ id: streamId });
    return result;
  }

  private reevaluateInTransaction(streamIds: readonly number[]): WriterOutcome {
    this.tails.clear();
    const none = new Set<number>();
    const deltas = new Deltas();
    const result: WriterOutcome = { counts: [], breaks: [], revisedBreaks: [], droppedBreaks: 0, observed: [], externalBreaks: [] };
    for (const streamId of streamIds) {
      const evaluation = this.slotsOf(streamId, [], -Infinity, none);
      const compactions = this.compactionsOf(streamId, evaluation.history, new Map(), none);
      this.apply(this.dictionary.streamById(streamId).projectId, streamId, evaluation, compactions, deltas, result, new Set());
    }
    deltas.apply(this.statements);
    return result;
  }

  /** A turn at `ts` in a session's compact stream changes its main stream from there on (SPEC §4.9). */
  private compactionChanged(streamId: number, ts: number, changed: (streamId: number, ts: number) => void): void {
    const stream = this.dictionary.streamById(streamId);
    if (stream.agentId !== COMPACT_AGENT) return;
    this.compactStreams.set(`${stream.projectId}\u0000${stream.sessionId}`, streamId);
    const main = this.dictionary.existingStream(stream.projectId, stream.sessionId, MAIN_AGENT);
    if (main !== undefined) changed(main, ts);
  }

  /** The session's compact stream, if it has one; known, or looked up once (null: none yet). */
  private compactStreamOf(projectId: number, sessionId: string): number | null {
    const key = `${projectId}\u0000${sessionId}`;
    let id = this.compactStreams.get(key);
    if (id === undefined) this.compactStreams.set(key, (id = this.dictionary.existingStream(projectId, sessionId, COMPACT_AGENT) ?? null));
    return id;
  }

  /** The compaction turns a main stream's evaluation from `history` on must know, in stream order. */
  private compactionsOf(
    streamId: number,
    history: History,
    staged: ReadonlyMap<string, Staged>,
    stagedIds: ReadonlySet<number>,
  ): Compaction[] {
    const stream = this.dictionary.streamById(streamId);
    if (stream.agentId !== MAIN_AGENT) return [];
    const compact = this.compactStreamOf(stream.projectId, stream.sessionId);
    if (compact === null) return [];
    const found: Compaction[] = [];
    for (const row of this.statements.compactions.all(compact, history.last?.ts ?? -Infinity)) {
      if (!stagedIds.has(row.id)) found.push({ requestId: row.request_id, ts: row.ts });
    }
    for (const s of staged.values()) if (s.streamId === compact && s.turn) found.push(s.turn);
    return found.sort(compareTurns);
  }

  private writeTail(batches: readonly WriterBatch[], counts: WriterOutcome['counts']): WriterOutcome['externalBreaks'] {
    const stored: WriterOutcome['externalBreaks'] = [];
    batches.forEach((batch, i) => {
      if (batch.externalBreaks && batch.externalBreaks.length > 0) {
        const fresh = this.tail.externalBreaks(batch.projectId, batch.externalBreaks);
        counts[i]!.externalBreaks = fresh.length;
        for (const record of fresh) stored.push({ projectId: batch.projectId, record });
      }
      if (batch.checkpoint) this.tail.checkpoint(batch.projectId, batch.checkpoint, Date.now());
    });
    return stored;
  }

  /** Step 1: every event of a batch joined into its turn, in memory; returns the batch's counts. */
  private stage(batch: WriterBatch, staged: Map<string, Staged>): BatchCounts {
    const { projectId } = batch;
    let accepted = 0;
    let duplicates = 0;
    const rejected: EventRejection[] = [];
    for (const [index, event] of batch.events.entries()) {
      const key = `${projectId}\u0000${event.requestId}`;
      let s = staged.get(key);
      if (!s) {
        const row = this.statements.find.get(ridOf(event.requestId), projectId, event.requestId);
        const parts = row ? rowToParts(row, this.dictionary) : { requestId: event.requestId };
        s = { projectId, requestId: event.requestId, row, parts, snapshotChanged: false, usageChanged: false, streamId: null, turn: undefined };
      }
      // A request id is unique within a project (SPEC §1): one of another session is a conflict, never an overwrite.
      const session = s.parts.snapshot?.sessionId ?? s.parts.usage?.sessionId;
      if (event.sessionId !== undefined && session !== undefined && event.sessionId !== session) {
        rejected.push({ event: index, field: 'requestId', problem: `already names a turn of session "${session}", not "${event.sessionId}": request ids must be unique within a project` });
        continue;
      }
      const { parts, duplicate } = mergeEvent(s.parts, event);
      if (duplicate) {
        duplicates++;
        continue;
      }
      accepted++;
      if (parts.snapshot !== s.parts.snapshot && parts.snapshot) {
        const { messageHashes } = parts.snapshot.prefix;
        const prefix = messageHashes ? { ...parts.snapshot.prefix, messageHashes: storedMessageHashes(messageHashes) } : parts.snapshot.prefix;
        parts.snapshot = { ...parts.snapshot, prefix: this.dictionary.intern(prefix) };
      }
      s.snapshotChanged ||= parts.snapshot !== s.parts.snapshot;
      s.usageChanged ||= parts.usage !== s.parts.usage;
      s.parts = parts;
      s.streamId = this.streamOf(projectId, parts);
      s.turn = s.streamId === null ? undefined : toTurn(parts);
      staged.set(key, s);
    }
    return rejected.length > 0 ? { accepted, duplicates, rejected } : { accepted, duplicates };
  }

  /**
   * Step 2's input: the turns of a stream to evaluate, in order, and the
   * history before them. Appends to a known tail need no reads.
   */
  private slotsOf(
    streamId: number,
    arriving: Staged[],
    changedAt: number | undefined,
    stagedIds: ReadonlySet<number>,
  ): { history: History; list: Slot[] } {
    const bySlot = (a: Slot, b: Slot) => compareTurns(a.turn, b.turn);
    const tail = this.tails.get(streamId);
    if (tail && changedAt === undefined && arriving.every((s) => !s.row && compareTurns(s.turn!, tail.last) > 0)) {
      const list = arriving.map((s) => ({ turn: s.turn!, row: undefined, staged: s })).sort(bySlot);
      return { history: cloneHistory(tail.history), list };
    }
    let from = changedAt ?? Infinity;
    for (const s of arriving) {
      from = Math.min(from, s.turn!.ts);
      if (s.row?.stream_id === streamId && s.row.ts !== null) from = Math.min(from, s.row.ts);
    }
    const list: Slot[] = arriving.map((s) => ({ turn: s.turn!, row: s.row, staged: s }));
    for (const row of this.statements.suffix.all(streamId, from)) {
      // A staged turn is in the list of the stream it now belongs to, with its new content.
      if (stagedIds.has(row.id)) continue;
      const turn = toTurn(rowToParts(row, this.dictionary));
      if (turn) list.push({ turn, row, staged: undefined });
    }
    list.sort(bySlot);
    return { history: this.historyBefore(streamId, from, list, stagedIds), list };
  }

  /**
   * The history of a stream before `from`, read back newest first only as far
   * as the turns from `from` on can look: past any turn that could still be in
   * flight, and to a turn every later one can read of each model family they
   * use (and of any family). The TTL tiers of the latest write before that
   * are stored on its turn.
   */
  private historyBefore(streamId: number, from: number, list: readonly Slot[], stagedIds: ReadonlySet<number>): History {
    // The families the turns from `from` on read (a turn of unknown model reads any: the latest of all).
    const families = new Set<string>();
    for (const slot of list) if (slot.turn.model !== undefined) families.add(modelFamily(slot.turn.model));
    const settledBy = from - this.statements.maxFlight.get(streamId)!.max_flight_ms;
    const window: Turn[] = [];
    let readableFound = false;
    for (const row of this.statements.before.iterate(streamId, from)) {
      if (stagedIds.has(row.id)) continue;
      const turn = toTurn(rowToParts(row, this.dictionary));
      if (!turn) continue;
      window.push(turn);
      const readyAt = readyAtOf(turn);
      if (turn.usage?.cacheReported && (readyAt === undefined || readyAt <= from)) {
        readableFound = true;
        // A turn of unknown model is of every family.
        if (turn.model === undefined) families.clear();
        else families.delete(modelFamily(turn.model));
      }
      if (turn.ts < settledBy && readableFound && families.size === 0) break;
    }
    window.reverse();
    const oldest = window[0];
    const seed = oldest
      ? this.statements.writerBefore.get(streamId, oldest.ts, oldest.ts, oldest.requestId)
      : undefined;
    const history = emptyHistory(seed?.tiers ?? 0);
    for (const turn of window) fold(history, turn);
    return history;
  }

  /** Steps 2 and 3 for one stream: evaluate, write what changed, count the difference. */
  private apply(
    projectId: number,
    streamId: number,
    evaluation: { history: History; list: Slot[] },
    compactions: readonly Compaction[],
    deltas: Deltas,
    result: WriterOutcome,
    written: Set<Staged>,
  ): void {
    const { history, list } = evaluation;
    // Before evaluation folds the list into it: the turn each gap is measured from.
    let previous = lastMeasured(history);
    const evaluations = new Map<string, StreamEvaluation>();
    const turns = list.map((slot) => slot.turn);
    for (const e of evaluateOrdered(history, turns, this.options, compactions)) evaluations.set(e.requestId, e);
    for (const slot of list) {
      const evaluation = evaluations.get(slot.turn.requestId);
      const state = evaluation ? stateIndex(evaluation.state) : null;
      const tiers = evaluation?.writerTiers ?? null;
      const record = evaluation?.break ?? null;
      const stored = slot.row;
      const storedBreak = stored ? this.storedBreak(stored) : null;
      const breakChanged = JSON.stringify(storedBreak) !== JSON.stringify(record);
      const gap = state !== null && hasGap(slot.turn) ? turnGap(previous, slot.turn) : null;
      if (gap) previous = slot.turn;
      const gapColumns = gapColumnsOf(gap);
      const gapChanged = stored !== undefined && (stored.gap_bucket !== gapColumns[0] || stored.gap_stake !== gapColumns[1] || stored.gap_rewritten !== gapColumns[2]);
      deltas.flight(streamId, slot.turn);
      if (!slot.staged && state === stored?.state && tiers === stored.tiers && !breakChanged && !gapChanged) continue;

      const before = stored ? this.contributionOfRow(stored, projectId) : null;
      const after = contributionOf(slot.turn, streamId, projectId, state, record, this.dictionary);
      deltas.add(before, -1);
      deltas.add(after, 1);
      if (before && stored?.gap_bucket != null) {
        deltas.gap(before, Math.floor(stored.ts! / ONE_HOUR), [stored.gap_bucket, stored.gap_stake ?? 0, stored.gap_rewritten ?? 0, stored.write ?? 0, stored.write_1h ?? 0], -1);
      }
      if (after && gap) {
        const usage = slot.turn.usage!;
        deltas.gap(after, Math.floor(slot.turn.ts / ONE_HOUR), [gapColumns[0]!, gap.stake, gap.rewritten, usage.write, usage.write1h], 1);
      }
      if (state !== null && (stored?.state ?? null) === null) result.observed.push({ projectId, turn: observedTurn(slot.turn, state) });

      let id: number;
      if (slot.staged) {
        id = this.store(slot.staged, state, tiers, gapColumns);
        written.add(slot.staged);
      } else {
        id = stored!.id;
        this.statements.setState.run(state, tiers, ...gapColumns, id);
      }
      if (breakChanged) {
        if (record && after) {
          this.statements.putBreak.run(
            id, projectId, streamId, slot.turn.ts, after.modelId, after.providerId, after.agentId,
            record.reason, JSON.stringify(record),
          );
          (storedBreak ? result.revisedBreaks : result.breaks).push({ projectId, record });
        } else {
          this.statements.dropBreak.run(id);
          result.droppedBreaks++;
        }
      }
    }
    const last = list.at(-1);
    // With nothing after `from`, the stream's last turn is not known here: read it again next time.
    if (last) this.tails.set(streamId, { last: last.turn, history });
    else this.tails.delete(streamId);
  }

  /** Writes a staged turn: one INSERT for a new one, the changed columns of an existing one. Returns its id. */
  private store(s: Staged, state: number | null, tiers: number | null, gap: GapColumns = NO_GAP): number {
    const snapshot = s.parts.snapshot;
    const usagePart = s.parts.usage;
    const ts = s.turn?.ts ?? null;
    if (!s.row) {
      const usage = usagePart?.usage;
      const inserted = this.statements.insert.run(
        s.projectId, ridOf(s.requestId), s.requestId, s.streamId, ts,
        ...this.snapshotColumns(snapshot),
        usagePart?.ts ?? null,
        usagePart?.ttftMs ?? null,
        usagePart ? this.dictionary.label('provider', usagePart.provider) : null,
        usagePart?.model === undefined ? null : this.dictionary.label('model', usagePart.model),
        usage?.uncached ?? null, usage?.read ?? null, usage?.write ?? null, usage?.write1h ?? null,
        usage?.output ?? null, usage ? (usage.cacheReported ? 1 : 0) : null, usage ? (usage.writeReported ? 1 : 0) : null,
        usagePart?.diagnostics === undefined ? null : JSON.stringify(usagePart.diagnostics),
        state,
        tiers,
        ...gap,
      );
      return Number(inserted.lastInsertRowid);
    }
    const id = s.row.id;
    if (s.row.stream_id !== s.streamId || s.row.ts !== ts) this.statements.place.run(s.streamId, ts, id);
    if (s.snapshotChanged) this.statements.setSnapshot.run(...this.snapshotColumns(snapshot), id);
    if (s.usageChanged && usagePart) {
      const usage = usagePart.usage;
      this.statements.setUsage.run(
        usagePart.ts ?? null,
        usagePart.ttftMs ?? null,
        this.dictionary.label('provider', usagePart.provider),
        usagePart.model === undefined ? null : this.dictionary.label('model', usagePart.model),
        usage.uncached, usage.read, usage.write, usage.write1h, usage.output, usage.cacheReported ? 1 : 0,
        usage.writeReported ? 1 : 0,
        usagePart.diagnostics === undefined ? null : JSON.stringify(usagePart.diagnostics),
        id,
      );
    }
    if (state !== s.row.state || tiers !== s.row.tiers || gap.some((value, i) => value !== [s.row!.gap_bucket, s.row!.gap_stake, s.row!.gap_rewritten][i])) {
      this.statements.setState.run(state, tiers, ...gap, id);
    }
    return id;
  }

  private snapshotColumns(
    snapshot: TurnParts['snapshot'],
  ): [number | null, number | null, string | null, Buffer | null, string | null] {
    if (!snapshot) return [null, null, null, null, null];
    const messages = snapshot.prefix.messageHashes;
    const markers = snapshot.prefix.markers?.filter(isMessageMarker) ?? [];
    return [
      this.dictionary.prefix(snapshot.prefix),
      snapshot.provider === undefined ? null : this.dictionary.label('provider', snapshot.provider),
      snapshot.expectMiss ?? null,
      messages ? encodeMessageHashes(messages) : null,
      markers.length > 0 ? JSON.stringify(markers) : null,
    ];
  }

  private streamOf(projectId: number, parts: TurnParts): number | null {
    const sessionId = parts.snapshot?.sessionId ?? parts.usage?.sessionId;
    if (sessionId === undefined) return null;
    const agentId = parts.snapshot?.agentId ?? parts.usage?.agentId ?? 'main';
    return this.dictionary.stream(projectId, sessionId, agentId);
  }

  private storedBreak(row: TurnRow): BreakRecord | null {
    if (row.state !== MISS) return null;
    const stored = this.statements.breakOf.get(row.id);
    return stored ? (storedJson<BreakRecord>(stored.record) ?? null) : null;
  }

  private contributionOfRow(row: TurnRow, projectId: number): Contribution | null {
    if (row.state === null || row.stream_id === null) return null;
    const turn = toTurn(rowToParts(row, this.dictionary));
    return turn ? contributionOf(turn, row.stream_id, projectId, row.state, this.storedBreak(row), this.dictionary) : null;
  }
}

/** A turn's gap as stored: bucket index, stake, rewritten; nulls for a turn without one. */
type GapColumns = [number | null, number | null, number | null];
const NO_GAP: GapColumns = [null, null, null];

function gapColumnsOf(gap: TurnGap | null): GapColumns {
  return gap ? [GAP_BUCKETS.indexOf(gap.bucket), gap.stake, gap.rewritten] : NO_GAP;
}

/** The stream's last turn in a history that reported cache usage: settled, or still in flight. */
function lastMeasured(history: History): Turn | undefined {
  let last: Turn | undefined;
  for (const seen of [history.latest, ...history.pending]) {
    if (seen?.candidate && (last === undefined || compareTurns(seen.turn, last) > 0)) last = seen.turn;
  }
  return last;
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

function upsert(table: string, keys: string[]): string {
  const columns = [...keys, ...SUM_COLUMNS];
  return `INSERT INTO ${table} (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')})
    ON CONFLICT (${keys.join(', ')}) DO UPDATE SET ${SUM_COLUMNS.map((c) => `${c} = ${c} + excluded.${c}`).join(', ')}`;
}

interface Keyed {
  key: (number | string)[];
  sums: Sums;
}

/** Changes to sums, grouped so that each key is written once per call. */
class Deltas {
  private readonly rollups = new Map<string, Keyed>();
  /** gap_rollups changes: key (GAP_KEY), sums (GAP_SUMS). */
  private readonly gaps = new Map<string, { key: number[]; sums: number[] }>();

  /** A turn's gap, counted in (1) or out (-1): [bucket, stake, rewritten, written, written 1h]. */
  gap(c: Contribution, hour: number, [bucket, stake, rewritten, written, written1h]: number[], sign: 1 | -1): void {
    const key = [c.projectId, hour, c.streamId, c.modelId, c.providerId, bucket!];
    const id = key.join('\u0000');
    let entry = this.gaps.get(id);
    if (!entry) this.gaps.set(id, (entry = { key, sums: [0, 0, 0, 0, 0] }));
    [1, stake!, rewritten!, written!, written1h!].forEach((value, i) => (entry.sums[i]! += sign * value));
  }
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

  apply(statements: {
    rollup: Database.Statement;
    dropEmptyRollup: Database.Statement;
    gapRollup: Database.Statement;
    dropEmptyGapRollup: Database.Statement;
    stream: Database.Statement;
  }): void {
    for (const { key, sums } of this.rollups.values()) {
      if (isZero(sums)) continue;
      statements.rollup.run(...key, ...values(sums));
      if (sums.turns < 0) statements.dropEmptyRollup.run(...key);
    }
    for (const { key, sums } of this.gaps.values()) {
      if (sums.every((v) => v === 0)) continue;
      statements.gapRollup.run(...key, ...sums);
      if (sums[0]! < 0) statements.dropEmptyGapRollup.run(...key);
    }
    for (const [id, { sums, first, last, flight }] of this.streams) {
      if (isZero(sums) && first === Infinity && flight === 0) continue;
      const params: Record<string, number | null> = {
        id,
        first: first === Infinity ? null : first,
        last: last === -Infinity ? null : last,
        flight,
      };
      SUM_KEYS.forEach((k, i) => (params[`s${i}`] = sums[k]));
      statements.stream.run(params);
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

function values(sums: Sums): number[] {
  return SUM_KEYS.map((k) => sums[k]);
}

function isZero(sums: Sums): boolean {
  return SUM_KEYS.every((k) => sums[k] === 0);
}
