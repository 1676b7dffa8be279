// The PostgreSQL implementation of Store, for any number of cachebreak
// processes sharing one database: writes through PgWriter (advisory locks in
// the database, no state trusted across transactions), reads through PgReads.
// Opened with the async PgStore.open, which migrates under an advisory lock.
import type { DetectionOptions } from '../../core/options.js';
import { RULES_VERSION } from '../../core/stream.js';
import type {
  ApiKey,
  BreakCauseRow,
  BreakPrefixes,
  ChangedTool,
  ExternalBreak,
  ExternalBreakFilters,
  BreakFilters,
  BreakOrder,
  Filters,
  IngestBatch,
  KeyState,
  Page,
  PageQuery,
  PruneOptions,
  PruneResult,
  ReevaluationResult,
  SessionOrder,
  SessionSummary,
  StatsQuery,
  StatsRow,
  Store,
  StoredCounts,
  StoreErrorKind,
  StreamSums,
  TailCheckpoint,
  TimeRange,
  TotalsQuery,
  TotalsRow,
  TurnView,
  Pairing,
  WaitBounds,
  WaitingHalf,
  WaitingUsage,
  WriteResult,
} from '../store.js';
import type { BreakRecord } from '../../core/types.js';
import type { ColdTurn } from '../../core/insights/fanout.js';
import type { StreamSnapshot } from '../../core/insights/chronic.js';
import type { GapRow } from '../../core/insights/ttl.js';
import { openPg, type OpenedPg, type PgOptions } from './db.js';
import { classifyPgError } from './errors.js';
import { PgKeyStore } from './keys.js';
import { PgHalfStore } from './halves.js';
import { PgNames } from './names.js';
import { PgReads } from './reads.js';
import { PgRetention } from './retention.js';
import { PgWriter } from './writer.js';
import { reevaluateInSteps } from '../evaluate/reevaluation.js';
import { writeResult } from '../evaluate/outcome.js';
import { GAPS_VERSION } from '../evaluate/gaps.js';

/** How long a readiness check waits for the database: a load balancer hears at once that this node cannot serve. */
const PING_DEADLINE_MS = 2_000;

export class PgStore implements Store {
  private readonly names: PgNames;
  private readonly writer: PgWriter;
  private readonly keys: PgKeyStore;
  private readonly halves: PgHalfStore;
  private readonly retention: PgRetention;
  /** Every read; see reads.ts. */
  readonly reads: PgReads;

  private constructor(
    private readonly opened: OpenedPg,
    options: DetectionOptions,
  ) {
    this.names = new PgNames(opened.sql);
    this.writer = new PgWriter(opened.sql, this.names, options);
    this.keys = new PgKeyStore(opened.sql, this.names);
    this.halves = new PgHalfStore(opened.sql, this.names);
    this.retention = new PgRetention(opened.sql);
    this.reads = new PgReads(opened.sql, this.names, opened.db);
  }

  /** Connects to `url` (postgres://…), brings the schema up to date and returns the store. */
  static async open(url: string, options: DetectionOptions, pg: PgOptions = {}): Promise<PgStore> {
    const opened = await openPg(url, pg);
    const store = new PgStore(opened, options);
    try {
      // A database that holds no judged turn yet is judged by these rules, and has every gap in gap_rollups, from the start.
      await opened.sql`
        INSERT INTO meta (key, value) SELECT * FROM (VALUES ('rules', ${String(RULES_VERSION)}), ('gaps', ${GAPS_VERSION})) AS v(key, value)
        WHERE NOT EXISTS (SELECT 1 FROM turns WHERE state IS NOT NULL)
        ON CONFLICT (key) DO NOTHING`;
    } catch (error) {
      await opened.sql.end();
      throw error;
    }
    return store;
  }

  /** The connection pool, for tools and tests that inspect the database. */
  get sql() {
    return this.opened.sql;
  }

  async write(batches: readonly IngestBatch[]): Promise<WriteResult> {
    const ids = await Promise.all(batches.map((b) => this.names.project(b.project)));
    const outcome = await this.writer.write(
      batches.map((b, i) => ({
        projectId: ids[i]!,
        events: b.events,
        tokenPoints: b.tokenPoints,
        externalBreaks: b.externalBreaks,
        checkpoint: b.checkpoint,
      })),
    );
    const names = new Map(batches.map((b, i) => [ids[i]!, b.project]));
    return writeResult(outcome, names);
  }

  async needsReevaluation(): Promise<boolean> {
    const rows = await this.opened.sql<{ key: string; value: string }[]>`SELECT key, value FROM meta WHERE key IN ('rules', 'gaps')`;
    const meta = new Map(rows.map((r) => [r.key, r.value]));
    // Turns stored before gap_rollups existed (migrations/pg/0003) get their gaps when evaluated again.
    return meta.get('rules') !== String(RULES_VERSION) || meta.get('gaps') !== GAPS_VERSION;
  }

  async reevaluate(progress?: (done: number, total: number) => void): Promise<ReevaluationResult> {
    const streamRows = await this.opened.sql<{ id: number; turns: number }[]>`SELECT id, turns FROM streams ORDER BY id`;
    const result = await reevaluateInSteps(streamRows, (ids) => this.writer.reevaluate(ids), progress);
    await this.opened.sql`
      INSERT INTO meta (key, value) VALUES ('rules', ${String(RULES_VERSION)}), ('gaps', ${GAPS_VERSION})
      ON CONFLICT (key) DO UPDATE SET value = excluded.value`;
    return result;
  }

  // --- keys ---

  createKey(key: Parameters<Store['createKey']>[0]): Promise<ApiKey> {
    return this.keys.create(key);
  }

  keysByPrefix(prefix: string): Promise<(ApiKey & { hash: string })[]> {
    return this.keys.byPrefix(prefix);
  }

  listKeys(): Promise<ApiKey[]> {
    return this.keys.list();
  }

  keysWithHashes(): Promise<(ApiKey & { hash: string })[]> {
    return this.keys.withHashes();
  }

  revokeKey(idOrPrefix: string, revokedMs: number): Promise<ApiKey | undefined> {
    return this.keys.revoke(idOrPrefix, revokedMs);
  }

  hasActiveKeys(): Promise<boolean> {
    return this.keys.hasActive();
  }

  keyState(): Promise<KeyState> {
    return this.keys.state();
  }

  // --- tail checkpoints (written with the events they cover, in write) ---

  async tailCheckpoints(project: string): Promise<TailCheckpoint[]> {
    const projectId = await this.names.existingProject(project);
    if (projectId === undefined) return [];
    return this.opened.sql<TailCheckpoint[]>`
      SELECT file_id AS "fileId", path, "offset", resume_at AS "resumeAt", resume_line AS "resumeLine",
             head_length AS "headLength", head_hash AS "headHash"
      FROM tail_checkpoints WHERE project_id = ${projectId}`.then((rows) => rows.map((r) => ({ ...r })));
  }

  async forgetTailCheckpoints(project: string, fileIds: readonly string[]): Promise<void> {
    const projectId = await this.names.existingProject(project);
    if (projectId === undefined || fileIds.length === 0) return;
    await this.opened.sql`DELETE FROM tail_checkpoints WHERE project_id = ${projectId} AND file_id = ANY(${[...fileIds]}::text[])`;
  }

  // --- OTLP join halves ---

  pairHalf(project: string, half: WaitingHalf, bounds: WaitBounds): Promise<Pairing> {
    return this.halves.pair(project, half, bounds, true);
  }

  putBackHalf(project: string, half: WaitingHalf, bounds: WaitBounds): Promise<Pairing> {
    return this.halves.pair(project, half, bounds, false);
  }

  trimHalves(now: number): Promise<number> {
    return this.halves.trim(now);
  }

  // --- retention, health ---

  prune(options: PruneOptions): Promise<PruneResult> {
    return this.retention.prune(options);
  }

  ping(): Promise<void> {
    return this.opened.sql.ping(PING_DEADLINE_MS);
  }

  classifyError(error: unknown): StoreErrorKind | undefined {
    return classifyPgError(error);
  }

  async close(): Promise<void> {
    await this.opened.sql.end();
  }

  // --- reads ---

  breaks(project: string, range: TimeRange, filters: BreakFilters, page: PageQuery, order?: BreakOrder): Promise<Page<BreakRecord>> {
    return this.reads.breaks(project, range, filters, page, order);
  }

  sessions(project: string, range: TimeRange, filters: Filters, page: PageQuery, order?: SessionOrder): Promise<Page<SessionSummary>> {
    return this.reads.sessions(project, range, filters, page, order);
  }

  recentSessionIds(project: string, range: TimeRange, limit: number): Promise<string[]> {
    return this.reads.recentSessionIds(project, range, limit);
  }

  changedTools(project: string, range: TimeRange, filters: Filters, limit: number): Promise<ChangedTool[]> {
    return this.reads.changedTools(project, range, filters, limit);
  }

  breakPrefixes(project: string, requestId: string): Promise<BreakPrefixes | null> {
    return this.reads.breakPrefixes(project, requestId);
  }

  sessionTurns(project: string, sessionId: string): Promise<TurnView[] | null> {
    return this.reads.sessionTurns(project, sessionId);
  }

  stats(project: string, query: StatsQuery): Promise<StatsRow[]> {
    return this.reads.stats(project, query);
  }

  totals(project: string, query: TotalsQuery): Promise<TotalsRow[]> {
    return this.reads.totals(project, query);
  }

  gapRows(project: string, range: TimeRange, filters: Filters): Promise<GapRow[]> {
    return this.reads.gapRows(project, range, filters);
  }

  lowRateStreams(project: string, range: TimeRange, filters: Filters, minTurns: number, maxRate: number, limit: number): Promise<StreamSums[]> {
    return this.reads.lowRateStreams(project, range, filters, minTurns, maxRate, limit);
  }

  streamSnapshots(project: string, sessionId: string, agentId: string, limit: number): Promise<StreamSnapshot[]> {
    return this.reads.streamSnapshots(project, sessionId, agentId, limit);
  }

  coldTurns(project: string, range: TimeRange, filters: Filters, limit: number): Promise<ColdTurn[]> {
    return this.reads.coldTurns(project, range, filters, limit);
  }

  breakCauses(project: string, range: TimeRange, filters: Filters): Promise<BreakCauseRow[]> {
    return this.reads.breakCauses(project, range, filters);
  }

  waitingUsage(project?: string): Promise<WaitingUsage[]> {
    return this.reads.waitingUsage(project);
  }

  storedCounts(): Promise<StoredCounts[]> {
    return this.reads.storedCounts();
  }

  externalBreaks(project: string, range: TimeRange, filters: ExternalBreakFilters, page: PageQuery): Promise<Page<ExternalBreak>> {
    return this.reads.externalBreaks(project, range, filters, page);
  }
}
