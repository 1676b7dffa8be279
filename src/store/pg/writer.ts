// Ingest into PostgreSQL, shared by any number of processes. One transaction
// per call, with the same steps and rules as SQLite's writer (../evaluate):
// stage the events against their stored turns, evaluate every touched stream
// in order, write the rows and the exact changes of sums. What makes it right
// when events of one stream reach several processes at once is in the
// database: every transaction first takes advisory locks on the sessions,
// requests and token series it touches (locks.ts), in one global order, and
// reads what it evaluates only after holding them. Nothing read in an
// earlier transaction is trusted but ids of values that never change.
import { raw, type Sql, type SqlPool } from './client.js';
import { toPrefix } from '../../core/prefix.js';
import type { History } from '../../core/history.js';
import type { DetectionOptions } from '../../core/options.js';
import { COMPACT_AGENT, type Compaction } from '../../core/stream.js';
import type { BreakRecord, CacheEvent } from '../../core/types.js';
import { getTableColumns } from 'drizzle-orm';
import { byCodePoint } from '../../core/hash.js';
import { rollups, SUM_KEYS } from '../schema.js';
import { applyEvaluation, Deltas, evaluatedChanged, ROLLUP_KEY, snapshotColumns, usageColumns, type RowSink } from '../evaluate/apply.js';
import { GAP_KEY, GAP_SUMS, NO_GAP, type GapColumns } from '../evaluate/gaps.js';
import type { LabelKind, Names, StreamInfo } from '../evaluate/names.js';
import {
  compactionsOf,
  evaluationStart,
  historyOf,
  historyWindow,
  planStreams,
  readsCompactions,
  slotsFrom,
  stagedIdsOf,
  type Slot,
} from '../evaluate/plan.js';
import { stageBatch, stagedKey, type Staged } from '../evaluate/staging.js';
import { MISS, originColumns, ridOf, rowToParts, storedBreak, type TurnRow } from '../sqlite/rows.js';
import { TURN_SELECT } from './reads.js';
import { toTurn } from '../../core/join.js';
import { pointGrowth, type SeriesState } from '../sqlite/token-points.js';
import { externalBreakKey } from '../sqlite/tail.js';
import type { WriterBatch, WriterOutcome } from '../evaluate/outcome.js';
import { classifyPgError } from './errors.js';
import { lockAll, MoreLocks, requestLock, retryable, seriesLock, sessionLock, tryLocks, type LockKey } from './locks.js';
import type { PgNames } from './names.js';

type Tx = Sql;

/** Rows of a stream read back before its evaluation start at first; more when its history reaches further. */
const HISTORY_ROWS = 64;
/** Runs of a transaction after a deadlock or serialization failure, or to take more locks. */
const ATTEMPTS = 8;

/** Orders request ids by code point, as the core and SQLite do. */
const C = 'COLLATE "C"';

/** A stored turn of a request that a write stages, with its stream's session. */
type FoundRow = TurnRow & { project_id: number; session_id: string | null };

/** A transaction's view of the streams of the sessions it holds. */
class HeldStreams {
  readonly info = new Map<number, StreamInfo>();
  readonly maxFlight = new Map<number, number>();
  private readonly ids = new Map<string, number>();
  /** Streams this transaction creates: id, project, session, agent label. */
  readonly created: [number, number, string, number][] = [];
  /** The names evaluation reads, with these streams. */
  readonly view: Names;

  constructor(private readonly names: PgNames) {
    this.view = names.withStreams(this.info);
  }

  add(id: number, projectId: number, sessionId: string, agentLabel: number, maxFlightMs: number): void {
    const agentId = this.names.labelValue(agentLabel) ?? 'main';
    this.info.set(id, { projectId, sessionId, agentId });
    this.maxFlight.set(id, maxFlightMs);
    this.ids.set(`${projectId}\u0000${agentLabel}\u0000${sessionId}`, id);
  }

  existing(projectId: number, sessionId: string, agentId: string): number | undefined {
    const agent = this.names.existingLabel('agent', agentId);
    return agent === undefined ? undefined : this.ids.get(`${projectId}\u0000${agent}\u0000${sessionId}`);
  }
}

/** A failure of the connection, rather than one the database answered within the transaction (a deadlock is the latter). */
function lostConnection(error: unknown): boolean {
  return classifyPgError(error) === 'unavailable' && !retryable(error);
}

/** Thrown when a transaction needs more reserved ids than it has: it runs again with more. */
class MoreIds extends Error {}

/** The reserved ids one transaction takes; given back to the process's pools when it rolls back. */
class Ids {
  private readonly streams: number[] = [];
  private readonly turns: number[] = [];

  constructor(
    private readonly streamPool: number[],
    private readonly turnPool: number[],
  ) {}

  stream(): number {
    return take(this.streamPool, this.streams);
  }

  turn(): number {
    return take(this.turnPool, this.turns);
  }

  giveBack(): void {
    this.streamPool.push(...this.streams.splice(0).reverse());
    this.turnPool.push(...this.turns.splice(0).reverse());
  }
}

function take(pool: number[], taken: number[]): number {
  const id = pool.pop();
  if (id === undefined) throw new MoreIds();
  taken.push(id);
  return id;
}

/** The row writes one transaction collects, then sends as a few bulk statements. */
class Writes {
  readonly inserts: { id: number; s: Staged; state: number | null; tiers: number | null; gap: GapColumns }[] = [];
  /** Per existing turn id: which column groups change (state: state, tiers and gap). */
  readonly updates = new Map<
    number,
    { s?: Staged; place: boolean; snapshot: boolean; usage: boolean; origin: boolean; state: number | null; tiers: number | null; gap: GapColumns; setState: boolean }
  >();
  readonly breaks = new Map<number, { streamId: number; ts: number; projectId: number; modelId: number; providerId: number; agentId: number; record: BreakRecord } | null>();
}

export class PgWriter {
  /** Stream and turn ids reserved from their sequences and not used yet (a rolled-back transaction returns its own). */
  private readonly streamIds: number[] = [];
  private readonly turnIds: number[] = [];
  /** Reserved beyond what a transaction is known to need; doubled whenever one ran out. */
  private spareIds = 16;

  constructor(
    private readonly sql: SqlPool,
    private readonly names: PgNames,
    private readonly options: DetectionOptions,
  ) {}

  /** Writes several requests' events in one transaction; committed when it resolves. */
  async write(batches: readonly WriterBatch[]): Promise<WriterOutcome> {
    await this.resolveNames(batches);
    const locks = new Set<LockKey>();
    for (const batch of batches) {
      for (const event of batch.events) {
        locks.add(requestLock(batch.projectId, event.requestId));
        if (event.sessionId !== undefined) locks.add(sessionLock(batch.projectId, event.sessionId));
      }
      for (const point of batch.tokenPoints ?? []) locks.add(seriesLock(batch.projectId, point.series));
    }
    return this.transaction(locks, (tx, held, ids) => this.writeIn(tx, batches, held, ids));
  }

  /** Evaluates streams again from their first turn, in one transaction (new rules or options). */
  async reevaluate(streamIds: readonly number[]): Promise<WriterOutcome> {
    const rows = await this.sql<{ project_id: number; session_id: string }[]>`
      SELECT DISTINCT project_id, session_id FROM streams WHERE id = ANY(${[...streamIds]}::int[])`;
    const locks = new Set(rows.map((r) => sessionLock(r.project_id, r.session_id)));
    return this.transaction(locks, async (tx, _held, ids) => {
      const streams = await this.holdStreams(tx, rows.map((r) => [r.project_id, r.session_id]));
      const wanted = streamIds.filter((id) => streams.info.has(id));
      const result: WriterOutcome = { counts: [], breaks: [], revisedBreaks: [], droppedBreaks: 0, observed: [], externalBreaks: [] };
      const writes = new Writes();
      const deltas = new Deltas();
      await this.evaluate(tx, streams, ids, new Map(), new Map(), new Map(wanted.map((id) => [id, -Number.MAX_SAFE_INTEGER])), deltas, result, writes);
      await this.flush(tx, streams, writes, deltas, []);
      return result;
    });
  }

  /**
   * Runs `body` in a transaction that first holds `locks`, again after a
   * deadlock or serialization failure, and again with more locks or ids when
   * it found it needs them.
   */
  private async transaction<T>(locks: Set<LockKey>, body: (tx: Tx, held: Set<LockKey>, ids: Ids) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      const ids = new Ids(this.streamIds, this.turnIds);
      try {
        return (await this.sql.begin(async (tx) => {
          await lockAll(tx, locks);
          return body(tx, new Set(locks), ids);
        })) as T;
      } catch (error) {
        // Ids handed out inside a rolled-back transaction are free again. Not those of one whose connection failed
        // (the database restarting, a network cut): it may have committed before the answer was lost, and an id used
        // twice would refuse a later write. Unused sequence values are only a gap.
        if (!lostConnection(error)) ids.giveBack();
        if (attempt >= ATTEMPTS) throw error;
        if (error instanceof MoreLocks) for (const key of error.keys) locks.add(key);
        else if (error instanceof MoreIds) this.spareIds *= 2;
        else if (!retryable(error)) throw error;
        if (retryable(error)) await new Promise((resolve) => setTimeout(resolve, Math.random() * 10 * attempt));
      }
    }
  }

  /** Labels and prefixes the events name, stored (committed on their own: they never change) and cached before the transaction. */
  private async resolveNames(batches: readonly WriterBatch[]): Promise<void> {
    const labels: [LabelKind, string | undefined][] = [['model', undefined], ['provider', undefined], ['agent', 'main'], ['agent', COMPACT_AGENT]];
    const prefixes = [];
    for (const batch of batches) {
      for (const event of batch.events as CacheEvent[]) {
        labels.push(['model', event.model], ['provider', event.provider], ['agent', event.agentId ?? 'main']);
        if (event.type !== 'usage') prefixes.push(toPrefix(event));
      }
      for (const point of batch.tokenPoints ?? []) labels.push(['model', point.model]);
    }
    await this.names.resolveLabels(labels);
    await this.names.resolvePrefixes(prefixes);
  }

  private async writeIn(tx: Tx, batches: readonly WriterBatch[], held: Set<LockKey>, ids: Ids): Promise<WriterOutcome> {
    // The stored turns of the requests, read under their locks.
    const projects: number[] = [];
    const requests: string[] = [];
    for (const batch of batches) {
      for (const event of batch.events) {
        projects.push(batch.projectId);
        requests.push(event.requestId);
      }
    }
    const found = await this.readRows(tx, projects, requests);
    const rows = new Map(found.map((row) => [stagedKey(row.project_id, row.request_id), row]));

    // A stored turn may belong to a session no event named: its lock is taken now, or the transaction runs again with it.
    const sessions = new Map<string, [number, string]>();
    const addSession = (projectId: number, sessionId: string) => sessions.set(`${projectId}\u0000${sessionId}`, [projectId, sessionId]);
    for (const batch of batches) for (const event of batch.events) if (event.sessionId !== undefined) addSession(batch.projectId, event.sessionId);
    const late: LockKey[] = [];
    for (const row of found) {
      if (row.session_id === null) continue;
      addSession(row.project_id, row.session_id);
      const key = sessionLock(row.project_id, row.session_id);
      if (!held.has(key)) late.push(key);
    }
    const refused = await tryLocks(tx, late);
    if (refused.length > 0) throw new MoreLocks(refused);
    // Read before their sessions were held: another process may have evaluated them since.
    if (late.length > 0) for (const row of await this.readRows(tx, projects, requests)) rows.set(stagedKey(row.project_id, row.request_id), row);

    const [streams] = await Promise.all([
      this.holdStreams(tx, [...sessions.values()]),
      this.loadNamesOf(tx, [...rows.values()]),
    ]);

    // Step 1: stage. New streams take reserved ids (created below, in the same transaction).
    await this.reserve(tx, this.streamIds, 'streams', this.streamsWanted(batches, rows, streams));
    const names = streams.view;
    const staged = new Map<string, Staged>();
    const stagingStore = {
      names,
      find: (projectId: number, requestId: string) => rows.get(stagedKey(projectId, requestId)),
      stream: (projectId: number, sessionId: string, agentId: string) => {
        const known = streams.existing(projectId, sessionId, agentId);
        if (known !== undefined) return known;
        const id = ids.stream();
        const agent = this.names.label('agent', agentId);
        streams.add(id, projectId, sessionId, agent, 0);
        streams.created.push([id, projectId, sessionId, agent]);
        return id;
      },
    };
    const counts = batches.map((batch) => stageBatch(batch.projectId, batch.events, staged, stagingStore));

    // Step 2 and 3: evaluate the streams the staged turns touch, and collect the writes.
    const { landing, changedFrom } = planStreams(staged.values(), {
      names,
      existingStream: (projectId, sessionId, agentId) => streams.existing(projectId, sessionId, agentId),
    });
    const starts = new Map<number, number>();
    for (const streamId of new Set([...landing.keys(), ...changedFrom.keys()])) {
      starts.set(streamId, evaluationStart(streamId, landing.get(streamId) ?? [], changedFrom.get(streamId)));
    }
    const result: WriterOutcome = { counts, breaks: [], revisedBreaks: [], droppedBreaks: 0, observed: [], externalBreaks: [] };
    const writes = new Writes();
    const deltas = new Deltas();
    await this.reserve(tx, this.turnIds, 'turns', [...staged.values()].filter((s) => !s.row).length);
    const written = await this.evaluate(tx, streams, ids, staged, landing, starts, deltas, result, writes);
    // Turns that no stream holds yet (a usage waiting for its snapshot) are stored as they are.
    const sink = this.sink(writes, new Map(), ids);
    for (const s of staged.values()) if (!written.has(s)) sink.store(s, null, null, NO_GAP);

    await this.flush(tx, streams, writes, deltas, [...changedFrom.keys()], batches, result);
    return result;
  }

  /** The stored turns of these requests, with their streams' sessions. */
  private readRows(tx: Tx, projects: number[], requests: string[]): Promise<FoundRow[]> {
    return tx<FoundRow[]>`
      SELECT ${raw(TURN_SELECT)}, t.project_id, s.session_id
      FROM unnest(${projects}::int[], ${requests.map(ridOf)}::bigint[], ${requests}::text[]) AS k(project_id, rid, request_id)
      JOIN turns t ON t.rid = k.rid AND t.project_id = k.project_id AND t.request_id = k.request_id
      LEFT JOIN streams s ON s.id = t.stream_id`;
  }

  /** Streams of the given sessions, as this transaction sees them (it holds their locks). */
  private async holdStreams(tx: Tx, sessions: [number, string][]): Promise<HeldStreams> {
    const rows = sessions.length === 0 ? [] : await tx<{ id: number; project_id: number; session_id: string; agent_id: number; max_flight_ms: number }[]>`
      SELECT s.id, s.project_id, s.session_id, s.agent_id, s.max_flight_ms
      FROM unnest(${sessions.map((s) => s[0])}::int[], ${sessions.map((s) => s[1])}::text[]) AS k(project_id, session_id)
      JOIN streams s ON s.project_id = k.project_id AND s.session_id = k.session_id`;
    await this.names.loadLabels(rows.map((r) => r.agent_id), tx);
    const streams = new HeldStreams(this.names);
    for (const r of rows) streams.add(r.id, r.project_id, r.session_id, r.agent_id, r.max_flight_ms);
    return streams;
  }

  /** At most how many streams staging may create: one per distinct (session, agent) the events name that does not exist. */
  private streamsWanted(batches: readonly WriterBatch[], rows: Map<string, FoundRow>, streams: HeldStreams): number {
    const wanted = new Set<string>();
    for (const batch of batches) {
      for (const event of batch.events) {
        const session = event.sessionId ?? rows.get(stagedKey(batch.projectId, event.requestId))?.session_id ?? undefined;
        if (session === undefined) continue;
        for (const agent of new Set([event.agentId ?? 'main', 'main'])) {
          if (streams.existing(batch.projectId, session, agent) === undefined) wanted.add(`${batch.projectId}\u0000${session}\u0000${agent}`);
        }
      }
    }
    return wanted.size;
  }

  /** Keeps at least `count` ids of a table's sequence reserved. */
  private async reserve(tx: Tx, pool: number[], table: 'streams' | 'turns', count: number): Promise<void> {
    const short = count - pool.length;
    if (short <= 0) return;
    const rows = await tx<{ id: number }[]>`
      SELECT nextval(pg_get_serial_sequence(${table}, 'id')) AS id FROM generate_series(1, ${short + this.spareIds})`;
    // Popped from the end: lowest ids first.
    pool.push(...rows.map((r) => r.id).sort((a, b) => b - a));
  }

  /** Label and prefix ids of stored turns, so that evaluation can read them synchronously. */
  private async loadNamesOf(tx: Tx, rows: readonly TurnRow[]): Promise<void> {
    await Promise.all([
      this.names.loadLabels(rows.flatMap((r) => [r.snapshot_provider_id, r.usage_provider_id, r.usage_model_id]), tx),
      this.names.loadPrefixes(rows.map((r) => r.prefix_id), tx),
    ]);
  }

  /**
   * Evaluates each stream from its start (`starts`), with the staged turns
   * that land in it, reading back its stored turns from there on and the
   * history before; returns the staged turns written.
   */
  private async evaluate(
    tx: Tx,
    streams: HeldStreams,
    ids: Ids,
    staged: ReadonlyMap<string, Staged>,
    landing: ReadonlyMap<number, Staged[]>,
    starts: ReadonlyMap<number, number>,
    deltas: Deltas,
    result: WriterOutcome,
    writes: Writes,
  ): Promise<Set<Staged>> {
    const written = new Set<Staged>();
    if (starts.size === 0) return written;
    const names = streams.view;
    const stagedIds = stagedIdsOf(staged.values());
    const streamIds = [...starts.keys()];
    const froms = streamIds.map((id) => starts.get(id)!);
    const [suffix, before] = await Promise.all([
      tx<TurnRow[]>`
        SELECT ${raw(TURN_SELECT)} FROM unnest(${streamIds}::int[], ${froms}::bigint[]) AS k(stream_id, from_ts)
        JOIN turns t ON t.stream_id = k.stream_id AND t.ts >= k.from_ts`,
      this.before(tx, streamIds, froms, HISTORY_ROWS),
    ]);
    await this.loadNamesOf(tx, [...suffix, ...before]);
    const suffixOf = groupBy(suffix, (r) => r.stream_id!);
    const beforeOf = groupBy(before, (r) => r.stream_id!);

    // Each stream's turns in order, and the window of history its evaluation needs.
    const lists = new Map<number, Slot[]>();
    const windows = new Map<number, ReturnType<typeof historyWindow>>();
    let short = streamIds;
    for (let limit = HISTORY_ROWS; short.length > 0; limit *= 8) {
      const again: number[] = [];
      for (const id of short) {
        const from = starts.get(id)!;
        let list = lists.get(id);
        if (!list) lists.set(id, (list = slotsFrom(landing.get(id) ?? [], suffixOf.get(id) ?? [], stagedIds, names)));
        const rows = beforeOf.get(id) ?? [];
        const window = historyWindow(rows, from, streams.maxFlight.get(id) ?? 0, list, stagedIds, names);
        windows.set(id, window);
        if (!window.complete && rows.length >= limit) again.push(id);
      }
      short = again;
      if (short.length > 0) {
        const more = await this.before(tx, short, short.map((id) => starts.get(id)!), limit * 8);
        await this.loadNamesOf(tx, more);
        for (const [id, rows] of groupBy(more, (r) => r.stream_id!)) beforeOf.set(id, rows);
      }
    }

    // The labels their turns count under (stored by whoever stored the turns), before and after this write.
    const labels: [LabelKind, string | undefined][] = [];
    for (const list of lists.values()) {
      for (const slot of list) {
        for (const turn of slot.row ? [slot.turn, toTurn(rowToParts(slot.row, names))] : [slot.turn]) {
          if (turn) labels.push(['model', turn.model], ['provider', turn.provider], ['agent', turn.agentId]);
        }
      }
    }
    await this.names.existingLabels(labels, tx);

    // The TTL tiers before each window, the compactions main streams must know, and the stored break records.
    const seeded = streamIds.filter((id) => windows.get(id)!.window.length > 0);
    const compactOf = new Map<number, number>();
    for (const id of streamIds) {
      if (!readsCompactions(names, id)) continue;
      const { projectId, sessionId } = streams.info.get(id)!;
      const compact = streams.existing(projectId, sessionId, COMPACT_AGENT);
      if (compact !== undefined) compactOf.set(id, compact);
    }
    const compactIds = [...compactOf.keys()];
    const missIds = [...new Set([...suffix, ...[...staged.values()].flatMap((s) => (s.row ? [s.row] : []))].filter((r) => r.state === MISS).map((r) => r.id))];
    const [seeds, compactRows, breakRows] = await Promise.all([
      seeded.length === 0 ? [] : tx<{ stream_id: number; tiers: number | null }[]>`
        SELECT k.stream_id, w.tiers
        FROM unnest(${seeded}::int[], ${seeded.map((id) => windows.get(id)!.window[0]!.ts)}::bigint[],
                    ${seeded.map((id) => windows.get(id)!.window[0]!.requestId)}::text[]) AS k(stream_id, ts, request_id)
        CROSS JOIN LATERAL (
          SELECT t.tiers FROM turns t WHERE t.stream_id = k.stream_id AND t.uncached IS NOT NULL
            AND (t.ts < k.ts OR (t.ts = k.ts AND t.request_id ${raw(C)} < k.request_id))
          ORDER BY t.ts DESC, t.request_id ${raw(C)} DESC LIMIT 1) AS w`,
      compactIds.length === 0 ? [] : tx<{ main: number; id: number; request_id: string; ts: number }[]>`
        SELECT k.main, t.id, t.request_id, t.ts
        FROM unnest(${compactIds}::int[], ${compactIds.map((id) => compactOf.get(id)!)}::int[],
                    ${compactIds.map((id) => windows.get(id)!.window.at(-1)?.ts ?? -Number.MAX_SAFE_INTEGER)}::bigint[]) AS k(main, compact, from_ts)
        JOIN turns t ON t.stream_id = k.compact AND t.ts >= k.from_ts`,
      missIds.length === 0 ? [] : tx<{ turn_id: number; record: string }[]>`SELECT turn_id, record FROM breaks WHERE turn_id = ANY(${missIds}::bigint[])`,
    ]);
    const seedOf = new Map(seeds.map((r) => [r.stream_id, r.tiers]));
    const compactRowsOf = groupBy(compactRows, (r) => r.main);
    const storedBreaks = new Map(breakRows.map((r) => [r.turn_id, storedBreak(r.record) ?? null]));

    const sink = this.sink(writes, storedBreaks, ids);
    for (const id of streamIds) {
      const history: History = historyOf(windows.get(id)!.window, seedOf.get(id));
      const list = lists.get(id)!;
      const compact = compactOf.get(id);
      const compactions: Compaction[] = compact === undefined ? [] : compactionsOf(compactRowsOf.get(id) ?? [], compact, staged.values(), stagedIds);
      applyEvaluation(streams.info.get(id)!.projectId, id, { history, list }, compactions, this.options, names, sink, deltas, result, written);
      deltas.span(id, list);
    }
    return written;
  }

  /** Up to `limit` stored turns of each stream before its start, newest first (stream order reversed). */
  private before(tx: Tx, ids: readonly number[], froms: readonly number[], limit: number): Promise<TurnRow[]> {
    return tx<TurnRow[]>`
      SELECT w.* FROM unnest(${[...ids]}::int[], ${[...froms]}::bigint[]) WITH ORDINALITY AS k(stream_id, from_ts, i)
      CROSS JOIN LATERAL (
        SELECT ${raw(TURN_SELECT)} FROM turns t WHERE t.stream_id = k.stream_id AND t.ts < k.from_ts
        ORDER BY t.ts DESC, t.request_id ${raw(C)} DESC LIMIT ${limit}) AS w
      ORDER BY k.i`;
  }

  private sink(writes: Writes, storedBreaks: ReadonlyMap<number, BreakRecord | null>, ids: Ids): RowSink {
    const update = (id: number) => {
      let entry = writes.updates.get(id);
      if (!entry) writes.updates.set(id, (entry = { place: false, snapshot: false, usage: false, origin: false, state: null, tiers: null, gap: NO_GAP, setState: false }));
      return entry;
    };
    return {
      store: (s, state, tiers, gap) => {
        if (!s.row) {
          const id = ids.turn();
          writes.inserts.push({ id, s, state, tiers, gap });
          return id;
        }
        const entry = update(s.row.id);
        const ts = s.turn?.ts ?? null;
        entry.s = s;
        entry.place = s.row.stream_id !== s.streamId || s.row.ts !== ts;
        entry.snapshot = s.snapshotChanged;
        entry.usage = s.usageChanged && s.parts.usage !== undefined;
        entry.origin = s.originChanged;
        if (evaluatedChanged(s.row, state, tiers, gap)) Object.assign(entry, { state, tiers, gap, setState: true });
        return s.row.id;
      },
      setState: (id, state, tiers, gap) => void Object.assign(update(id), { state, tiers, gap, setState: true }),
      putBreak: (id, streamId, ts, c, record) =>
        void writes.breaks.set(id, { streamId, ts, projectId: c.projectId, modelId: c.modelId, providerId: c.providerId, agentId: c.agentId, record }),
      dropBreak: (id) => void writes.breaks.set(id, null),
      storedBreak: (row) => storedBreaks.get(row.id) ?? null,
    };
  }

  /** Sends a transaction's writes, in bulk, in a fixed order of tables (and of keys within each). */
  private async flush(
    tx: Tx,
    streams: HeldStreams,
    writes: Writes,
    deltas: Deltas,
    spans: readonly number[],
    batches: readonly WriterBatch[] = [],
    result?: WriterOutcome,
  ): Promise<void> {
    const pending: Promise<unknown>[] = [];
    if (streams.created.length > 0) {
      const c = streams.created;
      pending.push(tx`INSERT INTO streams (id, project_id, session_id, agent_id)
        SELECT * FROM unnest(${c.map((x) => x[0])}::int[], ${c.map((x) => x[1])}::int[], ${c.map((x) => x[2])}::text[], ${c.map((x) => x[3])}::int[])`);
    }
    if (writes.inserts.length > 0) pending.push(this.insertTurns(tx, writes.inserts));
    if (writes.updates.size > 0) pending.push(this.updateTurns(tx, writes.updates));
    const dropped = [...writes.breaks].filter(([, b]) => b === null).map(([id]) => id);
    if (dropped.length > 0) pending.push(tx`DELETE FROM breaks WHERE turn_id = ANY(${dropped}::bigint[])`);
    const put = [...writes.breaks].filter((e): e is [number, NonNullable<(typeof e)[1]>] => e[1] !== null).sort((a, b) => a[0] - b[0]);
    if (put.length > 0) {
      pending.push(tx`
        INSERT INTO breaks (turn_id, project_id, stream_id, ts, model_id, provider_id, agent_id, reason, record)
        SELECT * FROM unnest(${put.map((e) => e[0])}::bigint[], ${put.map((e) => e[1].projectId)}::int[], ${put.map((e) => e[1].streamId)}::int[],
          ${put.map((e) => e[1].ts)}::bigint[], ${put.map((e) => e[1].modelId)}::int[], ${put.map((e) => e[1].providerId)}::int[],
          ${put.map((e) => e[1].agentId)}::int[], ${put.map((e) => e[1].record.reason)}::text[], ${put.map((e) => JSON.stringify(e[1].record))}::text[])
        ON CONFLICT (turn_id) DO UPDATE SET project_id = excluded.project_id, stream_id = excluded.stream_id, ts = excluded.ts,
          model_id = excluded.model_id, provider_id = excluded.provider_id, agent_id = excluded.agent_id, reason = excluded.reason,
          record = excluded.record`);
    }
    pending.push(...this.applyDeltas(tx, deltas));
    if (spans.length > 0) {
      pending.push(tx`
        UPDATE streams s SET first_ts = (SELECT min(ts) FROM turns WHERE stream_id = s.id), last_ts = (SELECT max(ts) FROM turns WHERE stream_id = s.id)
        WHERE s.id = ANY(${[...spans].sort((a, b) => a - b)}::int[])`);
    }
    pending.push(this.writeTokenPoints(tx, batches));
    if (result) pending.push(this.writeTail(tx, batches, result));
    await Promise.all(pending);
  }

  private insertTurns(tx: Tx, inserts: Writes['inserts']): Promise<unknown> {
    const rows = inserts.map(({ id, s, state, tiers, gap }) => {
      const [prefixId, snapshotProvider, expectMiss, hashes, markers, blocks, chars] = snapshotColumns(s.parts.snapshot, this.names);
      return [id, s.projectId, ridOf(s.requestId), s.requestId, s.streamId, s.turn?.ts ?? null, prefixId, snapshotProvider, expectMiss,
        hashes?.toString('hex') ?? null, markers, ...usageColumns(s.parts.usage, this.names), state, tiers, ...gap, blocks,
        ...originColumns(s.parts.origin), chars] as const;
    });
    const col = <I extends number>(i: I) => rows.map((r) => r[i]);
    return tx`
      INSERT INTO turns (id, project_id, rid, request_id, stream_id, ts, prefix_id, snapshot_provider_id, expect_miss, message_hashes,
        message_markers, end_ts, ttft_ms, usage_provider_id, usage_model_id, uncached, read, write, write_1h, output, cache_reported,
        write_reported, diagnostics, state, tiers, gap_bucket, gap_stake, gap_rewritten, message_blocks, agent_version, trace_id, span_id,
        prefix_chars)
      SELECT id, project_id, rid, request_id, stream_id, ts, prefix_id, snapshot_provider_id, expect_miss, decode(message_hashes, 'hex'),
        message_markers, end_ts, ttft_ms, usage_provider_id, usage_model_id, uncached, read, write, write_1h, output, cache_reported::boolean,
        write_reported::boolean, diagnostics, state, tiers, gap_bucket, gap_stake, gap_rewritten, message_blocks, agent_version, trace_id, span_id,
        prefix_chars
      FROM unnest(${col(0)}::bigint[], ${col(1)}::int[], ${col(2)}::bigint[], ${col(3)}::text[], ${col(4)}::int[], ${col(5)}::bigint[],
        ${col(6)}::int[], ${col(7)}::int[], ${col(8)}::text[], ${col(9)}::text[], ${col(10)}::text[], ${col(11)}::bigint[], ${col(12)}::bigint[],
        ${col(13)}::int[], ${col(14)}::int[], ${col(15)}::bigint[], ${col(16)}::bigint[], ${col(17)}::bigint[], ${col(18)}::bigint[],
        ${col(19)}::bigint[], ${col(20)}::int[], ${col(21)}::int[], ${col(22)}::text[], ${col(23)}::int[], ${col(24)}::int[],
        ${col(25)}::int[], ${col(26)}::bigint[], ${col(27)}::bigint[], ${col(28)}::text[], ${col(29)}::text[], ${col(30)}::text[],
        ${col(31)}::text[], ${col(32)}::text[])
        AS u(id, project_id, rid, request_id, stream_id, ts, prefix_id, snapshot_provider_id, expect_miss, message_hashes, message_markers,
          end_ts, ttft_ms, usage_provider_id, usage_model_id, uncached, read, write, write_1h, output, cache_reported, write_reported,
          diagnostics, state, tiers, gap_bucket, gap_stake, gap_rewritten, message_blocks, agent_version, trace_id, span_id, prefix_chars)`;
  }

  /** One UPDATE for every changed turn: each row sets only the column groups that changed (placement, snapshot, usage, state). */
  private updateTurns(tx: Tx, updates: Writes['updates']): Promise<unknown> {
    const rows = [...updates].sort((a, b) => a[0] - b[0]).map(([id, u]) => {
      const snapshot = u.snapshot && u.s ? snapshotColumns(u.s.parts.snapshot, this.names) : [null, null, null, null, null, null, null] as const;
      const usage = u.usage && u.s ? usageColumns(u.s.parts.usage, this.names) : usageColumns(undefined, this.names);
      // Flags as 0/1: the driver sends an array of booleans as one boolean.
      return [id, +u.place, u.place ? u.s!.streamId : null, u.place ? (u.s!.turn?.ts ?? null) : null, +u.snapshot, snapshot[0], snapshot[1],
        snapshot[2], snapshot[3]?.toString('hex') ?? null, snapshot[4], +u.usage, ...usage, +u.setState, u.state, u.tiers, ...u.gap, snapshot[5],
        +u.origin, ...originColumns(u.origin && u.s ? u.s.parts.origin : undefined), snapshot[6]] as const;
    });
    const col = <I extends number>(i: I) => rows.map((r) => r[i]);
    return tx`
      UPDATE turns t SET
        stream_id = CASE WHEN u.place = 1 THEN u.stream_id ELSE t.stream_id END,
        ts = CASE WHEN u.place = 1 THEN u.ts ELSE t.ts END,
        prefix_id = CASE WHEN u.snap = 1 THEN u.prefix_id ELSE t.prefix_id END,
        snapshot_provider_id = CASE WHEN u.snap = 1 THEN u.snapshot_provider_id ELSE t.snapshot_provider_id END,
        expect_miss = CASE WHEN u.snap = 1 THEN u.expect_miss ELSE t.expect_miss END,
        message_hashes = CASE WHEN u.snap = 1 THEN decode(u.message_hashes, 'hex') ELSE t.message_hashes END,
        message_markers = CASE WHEN u.snap = 1 THEN u.message_markers ELSE t.message_markers END,
        message_blocks = CASE WHEN u.snap = 1 THEN u.message_blocks ELSE t.message_blocks END,
        prefix_chars = CASE WHEN u.snap = 1 THEN u.prefix_chars ELSE t.prefix_chars END,
        end_ts = CASE WHEN u.use = 1 THEN u.end_ts ELSE t.end_ts END,
        ttft_ms = CASE WHEN u.use = 1 THEN u.ttft_ms ELSE t.ttft_ms END,
        usage_provider_id = CASE WHEN u.use = 1 THEN u.usage_provider_id ELSE t.usage_provider_id END,
        usage_model_id = CASE WHEN u.use = 1 THEN u.usage_model_id ELSE t.usage_model_id END,
        uncached = CASE WHEN u.use = 1 THEN u.uncached ELSE t.uncached END,
        read = CASE WHEN u.use = 1 THEN u.read ELSE t.read END,
        write = CASE WHEN u.use = 1 THEN u.write ELSE t.write END,
        write_1h = CASE WHEN u.use = 1 THEN u.write_1h ELSE t.write_1h END,
        output = CASE WHEN u.use = 1 THEN u.output ELSE t.output END,
        cache_reported = CASE WHEN u.use = 1 THEN u.cache_reported::boolean ELSE t.cache_reported END,
        write_reported = CASE WHEN u.use = 1 THEN u.write_reported::boolean ELSE t.write_reported END,
        diagnostics = CASE WHEN u.use = 1 THEN u.diagnostics ELSE t.diagnostics END,
        state = CASE WHEN u.st = 1 THEN u.state ELSE t.state END,
        tiers = CASE WHEN u.st = 1 THEN u.tiers ELSE t.tiers END,
        gap_bucket = CASE WHEN u.st = 1 THEN u.gap_bucket ELSE t.gap_bucket END,
        gap_stake = CASE WHEN u.st = 1 THEN u.gap_stake ELSE t.gap_stake END,
        gap_rewritten = CASE WHEN u.st = 1 THEN u.gap_rewritten ELSE t.gap_rewritten END,
        agent_version = CASE WHEN u.orig = 1 THEN u.agent_version ELSE t.agent_version END,
        trace_id = CASE WHEN u.orig = 1 THEN u.trace_id ELSE t.trace_id END,
        span_id = CASE WHEN u.orig = 1 THEN u.span_id ELSE t.span_id END
      FROM unnest(${col(0)}::bigint[], ${col(1)}::int[], ${col(2)}::int[], ${col(3)}::bigint[], ${col(4)}::int[], ${col(5)}::int[],
        ${col(6)}::int[], ${col(7)}::text[], ${col(8)}::text[], ${col(9)}::text[], ${col(10)}::int[], ${col(11)}::bigint[],
        ${col(12)}::bigint[], ${col(13)}::int[], ${col(14)}::int[], ${col(15)}::bigint[], ${col(16)}::bigint[], ${col(17)}::bigint[],
        ${col(18)}::bigint[], ${col(19)}::bigint[], ${col(20)}::int[], ${col(21)}::int[], ${col(22)}::text[], ${col(23)}::int[],
        ${col(24)}::int[], ${col(25)}::int[], ${col(26)}::int[], ${col(27)}::bigint[], ${col(28)}::bigint[], ${col(29)}::text[],
        ${col(30)}::int[], ${col(31)}::text[], ${col(32)}::text[], ${col(33)}::text[], ${col(34)}::text[])
        AS u(id, place, stream_id, ts, snap, prefix_id, snapshot_provider_id, expect_miss, message_hashes, message_markers, use, end_ts,
          ttft_ms, usage_provider_id, usage_model_id, uncached, read, write, write_1h, output, cache_reported, write_reported, diagnostics,
          st, state, tiers, gap_bucket, gap_stake, gap_rewritten, message_blocks, orig, agent_version, trace_id, span_id, prefix_chars)
      WHERE t.id = u.id`;
  }

  /** Rollups (in key order: concurrent writers lock their rows in one order) and stream sums. */
  private applyDeltas(tx: Tx, deltas: Deltas): Promise<unknown>[] {
    const pending: Promise<unknown>[] = [];
    const rollups = [...deltas.rollupChanges()].sort((a, b) => compareKeys(a.key, b.key));
    if (rollups.length > 0) {
      const keys = ROLLUP_KEY.map((_, i) => rollups.map((r) => r.key[i]));
      const sums = SUM_KEYS.map((k) => rollups.map((r) => r.sums[k]));
      const types = ['int', 'bigint', 'int', 'int', 'int', 'int', 'text'];
      pending.push(tx.unsafe(
        `INSERT INTO rollups (${ROLLUP_KEY.join(', ')}, ${SUM_COLUMNS.join(', ')})
         SELECT * FROM unnest(${[...types, ...SUM_KEYS.map(() => 'bigint')].map((t, i) => `$${i + 1}::${t}[]`).join(', ')})
         ON CONFLICT (${ROLLUP_KEY.join(', ')}) DO UPDATE SET ${SUM_COLUMNS.map((c) => `${c} = rollups.${c} + excluded.${c}`).join(', ')}`,
        [...keys, ...sums] as never[],
      ));
      // A key whose turns all moved elsewhere is gone, not a row of zeros.
      const emptied = rollups.filter((r) => r.sums.turns < 0);
      if (emptied.length > 0) {
        pending.push(tx.unsafe(
          `DELETE FROM rollups r USING unnest(${types.map((t, i) => `$${i + 1}::${t}[]`).join(', ')}) AS k(${ROLLUP_KEY.join(', ')})
           WHERE ${ROLLUP_KEY.map((c) => `r.${c} = k.${c}`).join(' AND ')} AND r.turns = 0`,
          ROLLUP_KEY.map((_, i) => emptied.map((r) => r.key[i])) as never[],
        ));
      }
    }
    const gaps = [...deltas.gaps.all()].sort((a, b) => compareKeys(a.key, b.key));
    if (gaps.length > 0) {
      const keys = GAP_KEY.map((_, i) => gaps.map((g) => g.key[i]));
      const sums = GAP_SUMS.map((_, i) => gaps.map((g) => g.sums[i]));
      const types = ['int', 'bigint', 'int', 'int', 'int', 'int'];
      pending.push(tx.unsafe(
        `INSERT INTO gap_rollups (${GAP_KEY.join(', ')}, ${GAP_SUMS.join(', ')})
         SELECT * FROM unnest(${[...types, ...GAP_SUMS.map(() => 'bigint')].map((t, i) => `$${i + 1}::${t}[]`).join(', ')})
         ON CONFLICT (${GAP_KEY.join(', ')}) DO UPDATE SET ${GAP_SUMS.map((c) => `${c} = gap_rollups.${c} + excluded.${c}`).join(', ')}`,
        [...keys, ...sums] as never[],
      ));
      // Like rollups: a key whose turns all moved elsewhere is gone.
      const emptied = gaps.filter((g) => g.sums[0]! < 0);
      if (emptied.length > 0) {
        pending.push(tx.unsafe(
          `DELETE FROM gap_rollups g USING unnest(${types.map((t, i) => `$${i + 1}::${t}[]`).join(', ')}) AS k(${GAP_KEY.join(', ')})
           WHERE ${GAP_KEY.map((c) => `g.${c} = k.${c}`).join(' AND ')} AND g.turns = 0`,
          GAP_KEY.map((_, i) => emptied.map((g) => g.key[i])) as never[],
        ));
      }
    }
    const streams = [...deltas.streamChanges()].sort((a, b) => a.id - b.id);
    if (streams.length > 0) {
      const sums = SUM_KEYS.map((k) => streams.map((s) => s.sums[k]));
      pending.push(tx.unsafe(
        `UPDATE streams s SET
           first_ts = CASE WHEN s.first_ts IS NULL OR s.first_ts > u.first THEN u.first ELSE s.first_ts END,
           last_ts = CASE WHEN s.last_ts IS NULL OR s.last_ts < u.last THEN u.last ELSE s.last_ts END,
           max_flight_ms = greatest(s.max_flight_ms, u.flight),
           ${SUM_COLUMNS.map((c) => `${c} = s.${c} + u.${c}`).join(', ')}
         FROM unnest($1::int[], $2::bigint[], $3::bigint[], $4::bigint[], ${SUM_KEYS.map((_, i) => `$${5 + i}::bigint[]`).join(', ')})
           AS u(id, first, last, flight, ${SUM_COLUMNS.join(', ')})
         WHERE s.id = u.id`,
        [streams.map((s) => s.id), streams.map((s) => s.first), streams.map((s) => s.last), streams.map((s) => s.flight), ...sums] as never[],
      ));
    }
    return pending;
  }

  /** Token counters: each point adds only what is new since its series' last (read under the series' lock). */
  private async writeTokenPoints(tx: Tx, batches: readonly WriterBatch[]): Promise<void> {
    const points = batches.flatMap((b) => (b.tokenPoints ?? []).map((point) => ({ projectId: b.projectId, point })));
    if (points.length === 0) return;
    const stored = await tx<(SeriesState & { project_id: number; series: string })[]>`
      SELECT s.project_id, s.series, s.start_ms, s.last_ms, s.last_value
      FROM unnest(${points.map((p) => p.projectId)}::int[], ${points.map((p) => p.point.series)}::text[]) AS k(project_id, series)
      JOIN token_series s ON s.project_id = k.project_id AND s.series = k.series`;
    const series = new Map(stored.map((r) => [`${r.project_id}\u0000${r.series}`, r as SeriesState]));
    const added = new Map<string, [number, number, string, number, string, number]>();
    for (const { projectId, point } of points) {
      const key = `${projectId}\u0000${point.series}`;
      const growth = pointGrowth(point, series.get(key));
      if (growth === undefined) continue;
      series.set(key, { start_ms: point.startMs, last_ms: point.timeMs, last_value: point.value });
      if (growth <= 0) continue;
      const minute = Math.floor(point.timeMs / 60_000);
      const modelId = this.names.label('model', point.model);
      const rollup = [projectId, minute, point.source, modelId, point.kind].join('\u0000');
      const entry = added.get(rollup);
      if (entry) entry[5] += growth;
      else added.set(rollup, [projectId, minute, point.source, modelId, point.kind, growth]);
    }
    const pending: Promise<unknown>[] = [];
    const moved = [...new Set(points.map((p) => `${p.projectId}\u0000${p.point.series}`))].flatMap((key) => {
      const state = series.get(key);
      const cut = key.indexOf('\u0000');
      return state ? [[Number(key.slice(0, cut)), key.slice(cut + 1), state] as const] : [];
    });
    if (moved.length > 0) {
      pending.push(tx`
        INSERT INTO token_series (project_id, series, start_ms, last_ms, last_value)
        SELECT * FROM unnest(${moved.map((x) => x[0])}::int[], ${moved.map((x) => x[1])}::text[], ${moved.map((x) => x[2].start_ms)}::bigint[],
          ${moved.map((x) => x[2].last_ms)}::bigint[], ${moved.map((x) => x[2].last_value)}::float8[])
        ON CONFLICT (project_id, series) DO UPDATE SET start_ms = excluded.start_ms, last_ms = excluded.last_ms, last_value = excluded.last_value`);
    }
    const rows = [...added.values()].sort((a, b) => compareKeys(a, b));
    if (rows.length > 0) {
      const col = (i: number) => rows.map((r) => r[i]) as never;
      pending.push(tx`
        INSERT INTO reported_tokens (project_id, minute, source, model_id, kind, tokens)
        SELECT * FROM unnest(${col(0)}::int[], ${col(1)}::bigint[], ${col(2)}::text[], ${col(3)}::int[], ${col(4)}::text[], ${col(5)}::float8[])
        ON CONFLICT (project_id, minute, source, model_id, kind) DO UPDATE SET tokens = reported_tokens.tokens + excluded.tokens`);
    }
    await Promise.all(pending);
  }

  /** Tail checkpoints and harness-reported breaks, in the transaction of the events they cover. */
  private async writeTail(tx: Tx, batches: readonly WriterBatch[], result: WriterOutcome): Promise<void> {
    const now = Date.now();
    await Promise.all(
      batches.map(async (batch, i) => {
        const pending: Promise<unknown>[] = [];
        const breaks = batch.externalBreaks ?? [];
        if (breaks.length > 0) {
          const keys = breaks.map(externalBreakKey);
          const col = <K extends keyof (typeof breaks)[number]>(k: K) => breaks.map((b) => b[k]);
          pending.push(
            tx<{ key: string }[]>`
              INSERT INTO external_breaks (project_id, key, harness, session_id, agent_id, source, ts, reason, call_number,
                previous_cache_read_tokens, current_cache_read_tokens, cache_creation_tokens, diff_path, file, line)
              SELECT ${batch.projectId}, * FROM unnest(${keys}::text[], ${col('harness')}::text[], ${col('sessionId')}::text[], ${col('agentId')}::text[],
                ${col('source')}::text[], ${col('ts')}::bigint[], ${col('reason')}::text[], ${col('callNumber')}::bigint[],
                ${col('previousCacheReadTokens')}::bigint[], ${col('currentCacheReadTokens')}::bigint[], ${col('cacheCreationTokens')}::bigint[],
                ${col('diffPath')}::text[], ${col('file')}::text[], ${col('line')}::bigint[])
              ON CONFLICT (project_id, key) DO NOTHING
              RETURNING key`.then((rows) => {
              const fresh = new Set(rows.map((r) => r.key));
              // The same report twice in one batch is stored once.
              const stored = breaks.filter((_, j) => fresh.delete(keys[j]!));
              result.counts[i]!.externalBreaks = stored.length;
              for (const record of stored) result.externalBreaks.push({ projectId: batch.projectId, record });
            }),
          );
        }
        const c = batch.checkpoint;
        if (c) {
          pending.push(tx`
            INSERT INTO tail_checkpoints (project_id, file_id, path, "offset", resume_at, resume_line, head_length, head_hash, updated_ms)
            VALUES (${batch.projectId}, ${c.fileId}, ${c.path}, ${c.offset}, ${c.resumeAt}, ${c.resumeLine}, ${c.headLength}, ${c.headHash}, ${now})
            ON CONFLICT (project_id, file_id) DO UPDATE SET path = excluded.path, "offset" = excluded."offset",
              resume_at = excluded.resume_at, resume_line = excluded.resume_line, head_length = excluded.head_length,
              head_hash = excluded.head_hash, updated_ms = excluded.updated_ms`);
        }
        await Promise.all(pending);
      }),
    );
  }
}

const SUM_COLUMNS = SUM_KEYS.map((key) => getTableColumns(rollups)[key].name);

function compareKeys(a: readonly (number | string)[], b: readonly (number | string)[]): number {
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!;
    const y = b[i]!;
    if (x !== y) return typeof x === 'number' && typeof y === 'number' ? x - y : byCodePoint(String(x), String(y));
  }
  return 0;
}

function groupBy<T, K>(rows: readonly T[], key: (row: T) => K): Map<K, T[]> {
  const groups = new Map<K, T[]>();
  for (const row of rows) {
    const k = key(row);
    const list = groups.get(k);
    if (list) list.push(row);
    else groups.set(k, [row]);
  }
  return groups;
}
