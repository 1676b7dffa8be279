// Ingest into SQLite, one transaction per call, in three steps:
// 1. join each event into its turn with the core's mergeEvent (in memory);
// 2. evaluate each touched stream once — from a cached tail when the new
//    turns only append to it, else from its earliest affected turn on disk;
// 3. write each row once, and apply the exact change to rollups and stream
//    sums (subtract what a turn counted before, add what it counts now).
import type Database from 'better-sqlite3';
import { getTableColumns } from 'drizzle-orm';
import type { MeasuredTurn } from '../../core/detect.js';
import { hashString } from '../../core/hash.js';
import { mergeEvent, toTurn, type TurnParts } from '../../core/join.js';
import type { DetectionOptions } from '../../core/options.js';
import { compareTurns, evaluateOrdered } from '../../core/stream.js';
import { TURN_STATES, type BreakRecord, type CacheEvent, type Evaluation, type Turn } from '../../core/types.js';
import { rollups, SUM_KEYS, type Sums } from '../schema.js';
import type { ExternalBreak, ObservedTurn, TailCheckpoint, TokenPoint } from '../store.js';
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
  storedMessageHashes,
  turnColumns,
  type Contribution,
  type TurnRow,
} from './rows.js';

/** 48 bits of xxh64: exact in a JS number and in SQLite's compact integer encoding. */
function ridOf(requestId: string): number {
  return parseInt(hashString(requestId).slice(0, 12), 16);
}

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
  counts: { accepted: number; duplicates: number; externalBreaks?: number }[];
  breaks: { projectId: number; record: BreakRecord }[];
  revisedBreaks: { projectId: number; record: BreakRecord }[];
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
  /** The last turn with usage: the previous turn of whatever is appended. */
  lastMeasured: MeasuredTurn | undefined;
}

/** A turn of an evaluated stream, with what is stored of it. */
interface Slot {
  turn: Turn;
  row: TurnRow | undefined;
  staged: Staged | undefined;
}

const SUM_COLUMNS = SUM_KEYS.map((key) => getTableColumns(rollups)[key].name);
const ROLLUP_KEY = ['project_id', 'minute', 'model_id', 'provider_id', 'agent_id', 'state', 'reason'];

export class Writer {
  private readonly statements;
  private readonly tokenPoints: TokenPointWriter;
  private readonly tail: TailWriter;
  /** Streams active at once are far fewer; one evicted costs two reads when it next appends. */
  private readonly tails = new Lru<number, StreamTail>(10_000);
  /** SQLite's data_version after our last write: a change means another connection wrote. */
  private dataVersion = -1;
  /** Writes several requests' events in one transaction (one commit for all of them). */
  readonly write: (batches: readonly WriterBatch[]) => WriterOutcome;

  constructor(
    sqlite: Database.Database,
    private readonly dictionary: Dictionary,
    private readonly options: DetectionOptions,
  ) {
    const insertColumns = [
      'project_id', 'rid', 'request_id', 'stream_id', 'ts', 'prefix_id', 'snapshot_provider_id', 'expect_miss',
      'message_hashes', 'end_ts', 'usage_provider_id', 'usage_model_id', 'uncached', 'read', 'write', 'write_1h',
      'output', 'cache_reported', 'diagnostics', 'state',
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
        `UPDATE turns SET prefix_id = ?, snapshot_provider_id = ?, expect_miss = ?, message_hashes = ? WHERE id = ?`,
      ),
      setUsage: sqlite.prepare(
        `UPDATE turns SET end_ts = ?, usage_provider_id = ?, usage_model_id = ?, uncached = ?, read = ?, write = ?,
           write_1h = ?, output = ?, cache_reported = ?, diagnostics = ? WHERE id = ?`,
      ),
      setState: sqlite.prepare('UPDATE turns SET state = ? WHERE id = ?'),
      previous: sqlite.prepare<[number, number], TurnRow>(
        `SELECT ${turnColumns()} FROM turns WHERE stream_id = ? AND ts < ? AND uncached IS NOT NULL
         ORDER BY ts DESC, request_id DESC LIMIT 1`,
      ),
      suffix: sqlite.prepare<[number, number], TurnRow>(
        `SELECT ${turnColumns()} FROM turns WHERE stream_id = ? AND ts >= ? ORDER BY ts, request_id`,
      ),
      breakOf: sqlite.prepare<[number], { record: string }>('SELECT record FROM breaks WHERE turn_id = ?'),
      putBreak: sqlite.prepare(
        `INSERT OR REPLACE INTO breaks (turn_id, project_id, stream_id, ts, model_id, provider_id, agent_id, reason, record)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      dropBreak: sqlite.prepare('DELETE FROM breaks WHERE turn_id = ?'),
      rollup: sqlite.prepare(upsert('rollups', ROLLUP_KEY)),
      // A key whose turns all moved elsewhere is gone, not a row of zeros.
      dropEmptyRollup: sqlite.prepare(`DELETE FROM rollups WHERE ${ROLLUP_KEY.map((c) => `${c} = ?`).join(' AND ')} AND turns = 0`),
      stream: sqlite.prepare(
        `UPDATE streams SET
           first_ts = CASE WHEN first_ts IS NULL OR first_ts > :first THEN :first ELSE first_ts END,
           last_ts = CASE WHEN last_ts IS NULL OR last_ts < :last THEN :last ELSE last_ts END,
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
  }

  /** Forgets every cached stream tail (after a failed transaction, or a write by another connection). */
  forget(): void {
    this.tails.clear();
    this.dataVersion = -1;
  }

  private writeInTransaction(batches: readonly WriterBatch[]): WriterOutcome {
    const version = this.statements.dataVersion.get()!.data_version;
    if (version !== this.dataVersion) {
      this.tails.clear();
      this.dictionary.forget();
      this.dataVersion = version;
    }

    const staged = new Map<string, Staged>();
    const counts: WriterOutcome['counts'] = batches.map((batch) => this.stage(batch, staged));
    for (const batch of batches) if (batch.tokenPoints) this.tokenPoints.write(batch.projectId, batch.tokenPoints);
    const external = this.writeTail(batches, counts);

    // Streams to evaluate: where staged turns land, and where moved turns left.
    const landing = new Map<number, Staged[]>();
    const leftFrom = new Map<number, number>();
    for (const s of staged.values()) {
      if (s.streamId !== null && s.turn) {
        const list = landing.get(s.streamId);
        if (list) list.push(s);
        else landing.set(s.streamId, [s]);
      }
      const row = s.row;
      if (row?.stream_id != null && row.ts !== null && (row.stream_id !== s.streamId || row.ts !== s.turn?.ts)) {
        leftFrom.set(row.stream_id, Math.min(leftFrom.get(row.stream_id) ?? Infinity, row.ts));
      }
    }

    const stagedIds = new Set<number>();
    for (const s of staged.values()) if (s.row) stagedIds.add(s.row.id);
    const deltas = new Deltas();
    const result: WriterOutcome = { counts, breaks: [], revisedBreaks: [], observed: [], externalBreaks: external };
    const written = new Set<Staged>();
    for (const streamId of new Set([...landing.keys(), ...leftFrom.keys()])) {
      const arriving = landing.get(streamId) ?? [];
      const slots = this.slotsOf(streamId, arriving, leftFrom.get(streamId), stagedIds);
      this.apply(this.dictionary.streamById(streamId).projectId, streamId, slots.previous, slots.list, deltas, result, written);
      deltas.span(streamId, slots.list);
    }
    // Turns that no stream holds yet (a usage waiting for its snapshot) are stored as they are.
    for (const s of staged.values()) if (!written.has(s)) this.store(s, null);

    deltas.apply(this.statements);
    for (const streamId of leftFrom.keys()) this.statements.streamSpan.run({ id: streamId });
    return result;
  }

  /** Harness-reported breaks and tail checkpoints: in this transaction, so a checkpoint is never ahead of what it covers. */
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
  private stage(batch: WriterBatch, staged: Map<string, Staged>) {
    const { projectId } = batch;
    let accepted = 0;
    let duplicates = 0;
    for (const event of batch.events) {
      const key = `${projectId}\u0000${event.requestId}`;
      let s = staged.get(key);
      if (!s) {
        const row = this.statements.find.get(ridOf(event.requestId), projectId, event.requestId);
        const parts = row ? rowToParts(row, this.dictionary) : { requestId: event.requestId };
        s = { projectId, requestId: event.requestId, row, parts, snapshotChanged: false, usageChanged: false, streamId: null, turn: undefined };
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
    return { accepted, duplicates };
  }

  /**
   * Step 2's input: the turns of a stream to evaluate, in order, and the turn
   * before them. Appends to a known tail need no reads.
   */
  private slotsOf(
    streamId: number,
    arriving: Staged[],
    leftAt: number | undefined,
    stagedIds: ReadonlySet<number>,
  ): { previous: MeasuredTurn | undefined; list: Slot[] } {
    const bySlot = (a: Slot, b: Slot) => compareTurns(a.turn, b.turn);
    const tail = this.tails.get(streamId);
    if (tail && leftAt === undefined && arriving.every((s) => !s.row && compareTurns(s.turn!, tail.last) > 0)) {
      const list = arriving.map((s) => ({ turn: s.turn!, row: undefined, staged: s })).sort(bySlot);
      return { previous: tail.lastMeasured, list };
    }
    let from = leftAt ?? Infinity;
    for (const s of arriving) {
      from = Math.min(from, s.turn!.ts);
      if (s.row?.stream_id === streamId && s.row.ts !== null) from = Math.min(from, s.row.ts);
    }
    const previousRow = this.statements.previous.get(streamId, from);
    const previous = previousRow ? (toTurn(rowToParts(previousRow, this.dictionary)) as MeasuredTurn) : undefined;
    const list: Slot[] = arriving.map((s) => ({ turn: s.turn!, row: s.row, staged: s }));
    for (const row of this.statements.suffix.all(streamId, from)) {
      // A staged turn is in the list of the stream it now belongs to, with its new content.
      if (stagedIds.has(row.id)) continue;
      const turn = toTurn(rowToParts(row, this.dictionary));
      if (turn) list.push({ turn, row, staged: undefined });
    }
    return { previous, list: list.sort(bySlot) };
  }

  /** Steps 2 and 3 for one stream: evaluate, write what changed, count the difference. */
  private apply(
    projectId: number,
    streamId: number,
    previous: MeasuredTurn | undefined,
    list: Slot[],
    deltas: Deltas,
    result: WriterOutcome,
    written: Set<Staged>,
  ): void {
    const evaluations = new Map<string, Evaluation>();
    for (const e of evaluateOrdered(previous, list.map((slot) => slot.turn), this.options)) evaluations.set(e.requestId, e);
    let lastMeasured = previous;
    for (const slot of list) {
      const evaluation = evaluations.get(slot.turn.requestId);
      if (slot.turn.usage) lastMeasured = slot.turn as MeasuredTurn;
      const state = evaluation ? stateIndex(evaluation.state) : null;
      const record = evaluation?.break ?? null;
      const stored = slot.row;
      const storedBreak = stored ? this.storedBreak(stored) : null;
      const breakChanged = JSON.stringify(storedBreak) !== JSON.stringify(record);
      if (!slot.staged && state === stored?.state && !breakChanged) continue;

      const before = stored ? this.contributionOfRow(stored, projectId) : null;
      const after = contributionOf(slot.turn, streamId, projectId, state, record, this.dictionary);
      deltas.add(before, -1);
      deltas.add(after, 1);
      if (state !== null && (stored?.state ?? null) === null) result.observed.push({ projectId, turn: observedTurn(slot.turn, state) });

      let id: number;
      if (slot.staged) {
        id = this.store(slot.staged, state);
        written.add(slot.staged);
      } else {
        id = stored!.id;
        this.statements.setState.run(state, id);
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
        }
      }
    }
    const last = list.at(-1);
    // With nothing after `from`, the stream's last turn is not known here: read it again next time.
    if (last) this.tails.set(streamId, { last: last.turn, lastMeasured });
    else this.tails.delete(streamId);
  }

  /** Writes a staged turn: one INSERT for a new one, the changed columns of an existing one. Returns its id. */
  private store(s: Staged, state: number | null): number {
    const snapshot = s.parts.snapshot;
    const usagePart = s.parts.usage;
    const ts = s.turn?.ts ?? null;
    if (!s.row) {
      const usage = usagePart?.usage;
      const inserted = this.statements.insert.run(
        s.projectId, ridOf(s.requestId), s.requestId, s.streamId, ts,
        ...this.snapshotColumns(snapshot),
        usagePart?.ts ?? null,
        usagePart ? this.dictionary.label('provider', usagePart.provider) : null,
        usagePart?.model === undefined ? null : this.dictionary.label('model', usagePart.model),
        usage?.uncached ?? null, usage?.read ?? null, usage?.write ?? null, usage?.write1h ?? null,
        usage?.output ?? null, usage ? (usage.cacheReported ? 1 : 0) : null,
        usagePart?.diagnostics === undefined ? null : JSON.stringify(usagePart.diagnostics),
        state,
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
        this.dictionary.label('provider', usagePart.provider),
        usagePart.model === undefined ? null : this.dictionary.label('model', usagePart.model),
        usage.uncached, usage.read, usage.write, usage.write1h, usage.output, usage.cacheReported ? 1 : 0,
        usagePart.diagnostics === undefined ? null : JSON.stringify(usagePart.diagnostics),
        id,
      );
    }
    if (state !== s.row.state) this.statements.setState.run(state, id);
    return id;
  }

  private snapshotColumns(snapshot: TurnParts['snapshot']): [number | null, number | null, string | null, Buffer | null] {
    if (!snapshot) return [null, null, null, null];
    const messages = snapshot.prefix.messageHashes;
    return [
      this.dictionary.prefix(snapshot.prefix),
      snapshot.provider === undefined ? null : this.dictionary.label('provider', snapshot.provider),
      snapshot.expectMiss ?? null,
      messages ? encodeMessageHashes(messages) : null,
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
    return stored ? (JSON.parse(stored.record) as BreakRecord) : null;
  }

  private contributionOfRow(row: TurnRow, projectId: number): Contribution | null {
    if (row.state === null || row.stream_id === null) return null;
    const turn = toTurn(rowToParts(row, this.dictionary));
    return turn ? contributionOf(turn, row.stream_id, projectId, row.state, this.storedBreak(row), this.dictionary) : null;
  }
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
  private readonly streams = new Map<number, { sums: Sums; first: number; last: number }>();

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

  private streamEntry(id: number) {
    let entry = this.streams.get(id);
    if (!entry) this.streams.set(id, (entry = { sums: emptySums(), first: Infinity, last: -Infinity }));
    return entry;
  }

  apply(statements: { rollup: Database.Statement; dropEmptyRollup: Database.Statement; stream: Database.Statement }): void {
    for (const { key, sums } of this.rollups.values()) {
      if (isZero(sums)) continue;
      statements.rollup.run(...key, ...values(sums));
      if (sums.turns < 0) statements.dropEmptyRollup.run(...key);
    }
    for (const [id, { sums, first, last }] of this.streams) {
      if (isZero(sums) && first === Infinity) continue;
      const params: Record<string, number | null> = {
        id,
        first: first === Infinity ? null : first,
        last: last === -Infinity ? null : last,
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
