// Ingest into SQLite, one transaction per call, in three steps:
// 1. join each event into its turn with the core's mergeEvent (in memory);
// 2. evaluate each touched stream once — from a cached history when the new
//    turns only append to it, else from its earliest affected turn, with the
//    history before that turn read back from disk;
// 3. write each row once, and apply the exact change to rollups and stream
//    sums (subtract what a turn counted before, add what it counts now).
// What does not depend on SQLite is in ../evaluate, shared with PostgreSQL.
import type Database from 'better-sqlite3';
import { getTableColumns } from 'drizzle-orm';
import { cloneHistory, type History } from '../../core/history.js';
import type { DetectionOptions } from '../../core/options.js';
import { COMPACT_AGENT, compareTurns, type Compaction } from '../../core/stream.js';
import type { Turn } from '../../core/types.js';
import { rollups, SUM_KEYS } from '../schema.js';
import { writeResult, type WriterBatch, type WriterOutcome } from '../evaluate/outcome.js';
import type { IngestBatch, WriteResult } from '../store.js';
import { applyEvaluation, Deltas, evaluatedChanged, ROLLUP_KEY, snapshotColumns, sumValues, usageColumns, type RowSink } from '../evaluate/apply.js';
import { GAP_KEY, GAP_SUMS, NO_GAP, type GapColumns } from '../evaluate/gaps.js';
import { bySlot, compactionsOf, evaluationStart, historyOf, historyWindow, planStreams, readsCompactions, slotsFrom, stagedIdsOf, type Slot } from '../evaluate/plan.js';
import { stageBatch, type Staged } from '../evaluate/staging.js';
import { TailWriter } from './tail.js';
import { TokenPointWriter } from './token-points.js';
import type { Dictionary } from './dictionary.js';
import { Lru } from './lru.js';
import { originColumns, ridOf, storedBreak, turnColumns, type TurnRow } from './rows.js';

/** What is known of a stream's end, so that appending to it needs no reads. */
interface StreamTail {
  /** The last turn of the stream in stream order (with or without usage). */
  last: Turn;
  /** The history after it: what whatever is appended is evaluated against. */
  history: History;
}

const SUM_COLUMNS = SUM_KEYS.map((key) => getTableColumns(rollups)[key].name);

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
  private readonly write: Database.Transaction<(batches: readonly WriterBatch[]) => WriterOutcome>;
  /** Evaluates streams again from their first turn, in one transaction (new rules or options). */
  readonly reevaluate: (streamIds: readonly number[]) => WriterOutcome;

  constructor(
    sqlite: Database.Database,
    private readonly dictionary: Dictionary,
    private readonly options: DetectionOptions,
  ) {
    const insertColumns = [
      'project_id', 'rid', 'request_id', 'stream_id', 'ts', 'prefix_id', 'snapshot_provider_id', 'expect_miss',
      'message_hashes', 'message_markers', 'message_blocks', 'prefix_chars', 'end_ts', 'ttft_ms', 'usage_provider_id', 'usage_model_id', 'uncached',
      'read', 'write', 'write_1h', 'output', 'cache_reported', 'write_reported', 'diagnostics', 'state', 'tiers',
      'gap_bucket', 'gap_stake', 'gap_rewritten', 'agent_version', 'trace_id', 'span_id',
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
        `UPDATE turns SET prefix_id = ?, snapshot_provider_id = ?, expect_miss = ?, message_hashes = ?, message_markers = ?,
           message_blocks = ?, prefix_chars = ? WHERE id = ?`,
      ),
      setUsage: sqlite.prepare(
        `UPDATE turns SET end_ts = ?, ttft_ms = ?, usage_provider_id = ?, usage_model_id = ?, uncached = ?, read = ?,
           write = ?, write_1h = ?, output = ?, cache_reported = ?, write_reported = ?, diagnostics = ? WHERE id = ?`,
      ),
      setOrigin: sqlite.prepare('UPDATE turns SET agent_version = ?, trace_id = ?, span_id = ? WHERE id = ?'),
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
      rollup: sqlite.prepare(upsert('rollups', [...ROLLUP_KEY])),
      gapRollup: sqlite.prepare(
        `INSERT INTO gap_rollups (${[...GAP_KEY, ...GAP_SUMS].join(', ')}) VALUES (${[...GAP_KEY, ...GAP_SUMS].map(() => '?').join(', ')})
         ON CONFLICT (${GAP_KEY.join(', ')}) DO UPDATE SET ${GAP_SUMS.map((c) => `${c} = ${c} + excluded.${c}`).join(', ')}`,
      ),
      // Like rollups: a key whose turns all moved elsewhere is gone.
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

  /**
   * Writes several requests' events in one transaction (one commit for all
   * of them). `immediate` takes the write lock as it begins, waiting for it
   * up to the busy timeout: for a thread that may wait (write-thread.ts).
   */
  ingest(batches: readonly IngestBatch[], immediate = false): WriteResult {
    const names = new Map<number, string>();
    let outcome;
    try {
      const writerBatches = batches.map((b) => {
        const projectId = this.dictionary.project(b.project);
        names.set(projectId, b.project);
        return { projectId, events: b.events, tokenPoints: b.tokenPoints, externalBreaks: b.externalBreaks, checkpoint: b.checkpoint };
      });
      outcome = immediate ? this.write.immediate(writerBatches) : this.write(writerBatches);
    } catch (error) {
      // Ids and stream tails cached inside the rolled-back transaction no longer hold.
      this.dictionary.forget();
      this.forget();
      throw error;
    }
    return writeResult(outcome, names);
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
    const stagingStore = {
      names: this.dictionary,
      find: (projectId: number, requestId: string) => this.statements.find.get(ridOf(requestId), projectId, requestId),
      stream: (projectId: number, sessionId: string, agentId: string) => this.dictionary.stream(projectId, sessionId, agentId),
    };
    const counts: WriterOutcome['counts'] = batches.map((batch) => stageBatch(batch.projectId, batch.events, staged, stagingStore));
    for (const batch of batches) if (batch.tokenPoints) this.tokenPoints.write(batch.projectId, batch.tokenPoints);
    const external = this.writeTail(batches, counts);

    const { landing, changedFrom } = planStreams(staged.values(), {
      names: this.dictionary,
      existingStream: (projectId, sessionId, agentId) => this.dictionary.existingStream(projectId, sessionId, agentId),
      compactStreamSeen: (projectId, sessionId, streamId) => this.compactStreams.set(`${projectId}\u0000${sessionId}`, streamId),
    });
    const stagedIds = stagedIdsOf(staged.values());
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
    for (const s of staged.values()) if (!written.has(s)) this.store(s, null, null, NO_GAP);

    this.applyDeltas(deltas);
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
    this.applyDeltas(deltas);
    return result;
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
    if (!readsCompactions(this.dictionary, streamId)) return [];
    const stream = this.dictionary.streamById(streamId);
    const compact = this.compactStreamOf(stream.projectId, stream.sessionId);
    if (compact === null) return [];
    return compactionsOf(this.statements.compactions.all(compact, history.last?.ts ?? -Infinity), compact, staged.values(), stagedIds);
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
    const tail = this.tails.get(streamId);
    if (tail && changedAt === undefined && arriving.every((s) => !s.row && compareTurns(s.turn!, tail.last) > 0)) {
      const list = arriving.map((s) => ({ turn: s.turn!, row: undefined, staged: s })).sort(bySlot);
      return { history: cloneHistory(tail.history), list };
    }
    const from = evaluationStart(streamId, arriving, changedAt);
    const list = slotsFrom(arriving, this.statements.suffix.all(streamId, from), stagedIds, this.dictionary);
    const maxFlight = this.statements.maxFlight.get(streamId)!.max_flight_ms;
    const { window } = historyWindow(this.statements.before.iterate(streamId, from), from, maxFlight, list, stagedIds, this.dictionary);
    const oldest = window[0];
    const seed = oldest ? this.statements.writerBefore.get(streamId, oldest.ts, oldest.ts, oldest.requestId) : undefined;
    return { history: historyOf(window, seed?.tiers), list };
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
    applyEvaluation(projectId, streamId, evaluation, compactions, this.options, this.dictionary, this.sink, deltas, result, written);
    const last = evaluation.list.at(-1);
    // With nothing after `from`, the stream's last turn is not known here: read it again next time.
    if (last) this.tails.set(streamId, { last: last.turn, history: evaluation.history });
    else this.tails.delete(streamId);
  }

  private readonly sink: RowSink = {
    store: (s, state, tiers, gap) => this.store(s, state, tiers, gap),
    setState: (id, state, tiers, gap) => void this.statements.setState.run(state, tiers, ...gap, id),
    putBreak: (id, streamId, ts, after, record) =>
      void this.statements.putBreak.run(id, after.projectId, streamId, ts, after.modelId, after.providerId, after.agentId, record.reason, JSON.stringify(record)),
    dropBreak: (id) => void this.statements.dropBreak.run(id),
    storedBreak: (row) => {
      const stored = this.statements.breakOf.get(row.id);
      return stored ? (storedBreak(stored.record) ?? null) : null;
    },
  };

  /** Writes a staged turn: one INSERT for a new one, the changed columns of an existing one. Returns its id. */
  private store(s: Staged, state: number | null, tiers: number | null, gap: GapColumns): number {
    const snapshot = s.parts.snapshot;
    const usagePart = s.parts.usage;
    const ts = s.turn?.ts ?? null;
    if (!s.row) {
      const inserted = this.statements.insert.run(
        s.projectId, ridOf(s.requestId), s.requestId, s.streamId, ts,
        ...snapshotColumns(snapshot, this.dictionary),
        ...usageColumns(usagePart, this.dictionary),
        state,
        tiers,
        ...gap,
        ...originColumns(s.parts.origin),
      );
      return Number(inserted.lastInsertRowid);
    }
    const id = s.row.id;
    if (s.row.stream_id !== s.streamId || s.row.ts !== ts) this.statements.place.run(s.streamId, ts, id);
    if (s.snapshotChanged) this.statements.setSnapshot.run(...snapshotColumns(snapshot, this.dictionary), id);
    if (s.usageChanged && usagePart) this.statements.setUsage.run(...usageColumns(usagePart, this.dictionary), id);
    if (s.originChanged) this.statements.setOrigin.run(...originColumns(s.parts.origin), id);
    if (evaluatedChanged(s.row, state, tiers, gap)) this.statements.setState.run(state, tiers, ...gap, id);
    return id;
  }

  private applyDeltas(deltas: Deltas): void {
    for (const { key, sums } of deltas.rollupChanges()) {
      this.statements.rollup.run(...key, ...sumValues(sums));
      if (sums.turns < 0) this.statements.dropEmptyRollup.run(...key);
    }
    for (const { key, sums } of deltas.gaps.all()) {
      this.statements.gapRollup.run(...key, ...sums);
      if (sums[0]! < 0) this.statements.dropEmptyGapRollup.run(...key);
    }
    for (const { id, sums, first, last, flight } of deltas.streamChanges()) {
      const params: Record<string, number | null> = { id, first, last, flight };
      SUM_KEYS.forEach((k, i) => (params[`s${i}`] = sums[k]));
      this.statements.stream.run(params);
    }
  }
}

function upsert(table: string, keys: string[]): string {
  const columns = [...keys, ...SUM_COLUMNS];
  return `INSERT INTO ${table} (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')})
    ON CONFLICT (${keys.join(', ')}) DO UPDATE SET ${SUM_COLUMNS.map((c) => `${c} = ${c} + excluded.${c}`).join(', ')}`;
}
