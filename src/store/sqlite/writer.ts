// Ingest into SQLite, one transaction per call: join each event into its turn
// with the core's mergeEvent, then re-evaluate each touched stream from its
// earliest affected turn and apply the exact change to rollups, totals and
// stream sums (subtract what a turn counted before, add what it counts now).
import type Database from 'better-sqlite3';
import { hashString } from '../../core/hash.js';
import { mergeEvent, toTurn, type TurnParts } from '../../core/join.js';
import type { DetectionOptions } from '../../core/options.js';
import { evaluateOrdered } from '../../core/stream.js';
import type { MeasuredTurn } from '../../core/detect.js';
import type { BreakRecord, CacheEvent, Turn } from '../../core/types.js';
import type { Dictionary } from './dictionary.js';
import {
  contributionOf,
  encodeMessageHashes,
  MISS,
  rowToParts,
  stateIndex,
  turnColumns,
  type Contribution,
  type TurnRow,
} from './rows.js';
import { getTableColumns } from 'drizzle-orm';
import { SUM_KEYS, totals, type Sums } from '../schema.js';

export interface WriteOutcome {
  accepted: number;
  duplicates: number;
  /** Breaks that are new, or whose record changed, in this call. */
  breaks: BreakRecord[];
}

/** 48 bits of xxh64: exact in a JS number and in SQLite's compact integer encoding. */
function ridOf(requestId: string): number {
  return parseInt(hashString(requestId).slice(0, 12), 16);
}

interface Touched {
  /** What the turn counted before this call (null: nothing). */
  before: Contribution | null;
}

export class Writer {
  private readonly statements;
  readonly write: (projectId: number, events: readonly CacheEvent[]) => WriteOutcome;

  constructor(
    sqlite: Database.Database,
    private readonly dictionary: Dictionary,
    private readonly options: DetectionOptions,
  ) {
    this.statements = {
      find: sqlite.prepare<[number, number, string], TurnRow>(
        `SELECT ${turnColumns()} FROM turns WHERE rid = ? AND project_id = ? AND request_id = ?`,
      ),
      insert: sqlite.prepare(
        `INSERT INTO turns (project_id, rid, request_id, stream_id, ts) VALUES (?, ?, ?, ?, ?)`,
      ),
      place: sqlite.prepare('UPDATE turns SET stream_id = ?, ts = ? WHERE id = ?'),
      setSnapshot: sqlite.prepare(
        `UPDATE turns SET prefix_id = ?, snapshot_provider_id = ?, expect_miss = ?, message_hashes = ? WHERE id = ?`,
      ),
      setUsage: sqlite.prepare(
        `UPDATE turns SET end_ts = ?, usage_provider_id = ?, usage_model_id = ?, uncached = ?, read = ?, write = ?,
           write_1h = ?, output = ?, cache_reported = ?, diagnostics = ? WHERE id = ?`,
      ),
      previous: sqlite.prepare<[number, number], TurnRow>(
        `SELECT ${turnColumns()} FROM turns WHERE stream_id = ? AND ts < ? AND uncached IS NOT NULL
         ORDER BY ts DESC, request_id DESC LIMIT 1`,
      ),
      suffix: sqlite.prepare<[number, number], TurnRow>(
        `SELECT ${turnColumns()} FROM turns WHERE stream_id = ? AND ts >= ? ORDER BY ts, request_id`,
      ),
      setState: sqlite.prepare('UPDATE turns SET state = ? WHERE id = ?'),
      breakOf: sqlite.prepare<[number], { record: string }>('SELECT record FROM breaks WHERE turn_id = ?'),
      putBreak: sqlite.prepare(
        `INSERT OR REPLACE INTO breaks (turn_id, project_id, stream_id, ts, model_id, provider_id, agent_id, reason, record)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      dropBreak: sqlite.prepare('DELETE FROM breaks WHERE turn_id = ?'),
      rollup: sqlite.prepare(upsert('rollups', ['project_id', 'minute', 'model_id', 'provider_id', 'agent_id', 'state', 'reason'])),
      total: sqlite.prepare(upsert('totals', ['project_id', 'model_id', 'provider_id', 'agent_id', 'state', 'reason'])),
      streamSums: sqlite.prepare(
        `UPDATE streams SET ${SUM_COLUMNS.map((c) => `${c} = ${c} + ?`).join(', ')} WHERE id = ?`,
      ),
      streamSpan: sqlite.prepare(
        `UPDATE streams SET first_ts = (SELECT min(ts) FROM turns WHERE stream_id = :id),
           last_ts = (SELECT max(ts) FROM turns WHERE stream_id = :id) WHERE id = :id`,
      ),
    };
    this.write = sqlite.transaction((projectId: number, events: readonly CacheEvent[]) =>
      this.writeInTransaction(projectId, events),
    );
  }

  private writeInTransaction(projectId: number, events: readonly CacheEvent[]): WriteOutcome {
    let accepted = 0;
    let duplicates = 0;
    const touched = new Map<number, Touched>();
    /** Per stream, the earliest time whose turns must be re-evaluated. */
    const affected = new Map<number, number>();
    const affect = (streamId: number | null, ts: number | null) => {
      if (streamId === null || ts === null) return;
      const earliest = affected.get(streamId);
      if (earliest === undefined || ts < earliest) affected.set(streamId, ts);
    };

    for (const event of events) {
      const rid = ridOf(event.requestId);
      const row = this.statements.find.get(rid, projectId, event.requestId);
      const existing = row ? rowToParts(row, this.dictionary) : undefined;
      const { parts, duplicate } = mergeEvent(existing, event);
      if (duplicate) {
        duplicates++;
        continue;
      }
      accepted++;
      const streamId = this.streamOf(projectId, parts);
      const ts = toTurn(parts)?.ts ?? null;
      let id: number;
      if (row) {
        id = row.id;
        if (!touched.has(id)) touched.set(id, { before: this.contributionOfRow(row, projectId) });
        affect(row.stream_id, row.ts);
        this.statements.place.run(streamId, ts, id);
      } else {
        id = Number(this.statements.insert.run(projectId, rid, event.requestId, streamId, ts).lastInsertRowid);
        touched.set(id, { before: null });
      }
      if (parts.snapshot !== existing?.snapshot) this.storeSnapshot(id, parts);
      if (parts.usage !== existing?.usage) this.storeUsage(id, parts);
      affect(streamId, ts);
    }

    const deltas = new Deltas();
    const breaks: BreakRecord[] = [];
    for (const [streamId, from] of affected) {
      this.reevaluate(streamId, from, projectId, touched, deltas, breaks);
      this.statements.streamSpan.run({ id: streamId });
    }
    // Turns touched but not re-evaluated (still waiting to be placed) counted nothing before and after.
    deltas.apply(this.statements);
    return { accepted, duplicates, breaks };
  }

  private streamOf(projectId: number, parts: TurnParts): number | null {
    const sessionId = parts.snapshot?.sessionId ?? parts.usage?.sessionId;
    if (sessionId === undefined) return null;
    const agentId = parts.snapshot?.agentId ?? parts.usage?.agentId ?? 'main';
    return this.dictionary.stream(projectId, sessionId, agentId);
  }

  private storeSnapshot(id: number, parts: TurnParts): void {
    const snapshot = parts.snapshot!;
    const messages = snapshot.prefix.messageHashes;
    this.statements.setSnapshot.run(
      this.dictionary.prefix(snapshot.prefix),
      snapshot.provider === undefined ? null : this.dictionary.label('provider', snapshot.provider),
      snapshot.expectMiss ?? null,
      messages ? encodeMessageHashes(messages) : null,
      id,
    );
  }

  private storeUsage(id: number, parts: TurnParts): void {
    const part = parts.usage!;
    const usage = part.usage;
    this.statements.setUsage.run(
      part.ts ?? null,
      this.dictionary.label('provider', part.provider),
      part.model === undefined ? null : this.dictionary.label('model', part.model),
      usage.uncached,
      usage.read,
      usage.write,
      usage.write1h,
      usage.output,
      usage.cacheReported ? 1 : 0,
      part.diagnostics === undefined ? null : JSON.stringify(part.diagnostics),
      id,
    );
  }

  private storedBreak(row: TurnRow): BreakRecord | null {
    if (row.state !== MISS) return null;
    const stored = this.statements.breakOf.get(row.id);
    return stored ? (JSON.parse(stored.record) as BreakRecord) : null;
  }

  private turnOf(row: TurnRow): Turn | undefined {
    return toTurn(rowToParts(row, this.dictionary));
  }

  private contributionOfRow(row: TurnRow, projectId: number): Contribution | null {
    if (row.state === null || row.stream_id === null) return null;
    const turn = this.turnOf(row);
    return turn ? contributionOf(turn, row.stream_id, projectId, row.state, this.storedBreak(row), this.dictionary) : null;
  }

  private reevaluate(
    streamId: number,
    from: number,
    projectId: number,
    touched: Map<number, Touched>,
    deltas: Deltas,
    breaks: BreakRecord[],
  ): void {
    const previousRow = this.statements.previous.get(streamId, from);
    const previous = previousRow ? (this.turnOf(previousRow) as MeasuredTurn | undefined) : undefined;
    const rows = this.statements.suffix.all(streamId, from);
    const turns: Turn[] = [];
    const rowByRequest = new Map<string, TurnRow>();
    for (const row of rows) {
      const turn = this.turnOf(row);
      if (!turn) continue;
      turns.push(turn);
      rowByRequest.set(turn.requestId, row);
    }
    const turnByRequest = new Map(turns.map((t) => [t.requestId, t]));
    for (const evaluation of evaluateOrdered(previous, turns, this.options)) {
      const row = rowByRequest.get(evaluation.requestId)!;
      const state = stateIndex(evaluation.state);
      const storedBreak = this.storedBreak(row);
      const record = evaluation.break;
      const breakChanged = JSON.stringify(storedBreak) !== JSON.stringify(record);
      const wasTouched = touched.get(row.id);
      if (!wasTouched && state === row.state && !breakChanged) continue;

      const before = wasTouched ? wasTouched.before : this.contributionOfRow(row, projectId);
      const turn = turnByRequest.get(evaluation.requestId)!;
      const after = contributionOf(turn, streamId, projectId, state, record, this.dictionary);
      deltas.add(before, -1);
      deltas.add(after, 1);
      touched.delete(row.id);

      if (state !== row.state) this.statements.setState.run(state, row.id);
      if (breakChanged) {
        if (record && after) {
          this.statements.putBreak.run(
            row.id, projectId, streamId, turn.ts, after.modelId, after.providerId, after.agentId,
            record.reason, JSON.stringify(record),
          );
          breaks.push(record);
        } else {
          this.statements.dropBreak.run(row.id);
        }
      }
    }
  }
}

const SUM_COLUMNS = SUM_KEYS.map((key) => getTableColumns(totals)[key].name);

function upsert(table: string, keys: string[]): string {
  const columns = [...keys, ...SUM_COLUMNS];
  return `INSERT INTO ${table} (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')})
    ON CONFLICT (${keys.join(', ')}) DO UPDATE SET ${SUM_COLUMNS.map((c) => `${c} = ${c} + excluded.${c}`).join(', ')}`;
}

/** Sums of contribution changes, grouped so each key is written once per call. */
class Deltas {
  private readonly rollups = new Map<string, { key: (number | string)[]; sums: Sums }>();
  private readonly totals = new Map<string, { key: (number | string)[]; sums: Sums }>();
  private readonly streams = new Map<number, Sums>();

  add(contribution: Contribution | null, sign: 1 | -1): void {
    if (!contribution) return;
    const c = contribution;
    const dims = [c.projectId, c.modelId, c.providerId, c.agentId, c.state, c.reason];
    accumulate(this.rollups, [c.projectId, c.minute, ...dims.slice(1)], c.sums, sign);
    accumulate(this.totals, dims, c.sums, sign);
    const stream = this.streams.get(c.streamId) ?? emptySums();
    for (const k of SUM_KEYS) stream[k] += sign * c.sums[k];
    this.streams.set(c.streamId, stream);
  }

  apply(statements: {
    rollup: Database.Statement;
    total: Database.Statement;
    streamSums: Database.Statement;
  }): void {
    for (const { key, sums } of this.rollups.values()) if (!isZero(sums)) statements.rollup.run(...key, ...values(sums));
    for (const { key, sums } of this.totals.values()) if (!isZero(sums)) statements.total.run(...key, ...values(sums));
    for (const [id, sums] of this.streams) if (!isZero(sums)) statements.streamSums.run(...values(sums), id);
  }
}

function emptySums(): Sums {
  return Object.fromEntries(SUM_KEYS.map((k) => [k, 0])) as Sums;
}

function accumulate(
  into: Map<string, { key: (number | string)[]; sums: Sums }>,
  key: (number | string)[],
  sums: Sums,
  sign: 1 | -1,
): void {
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
