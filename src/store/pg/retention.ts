// Retention in PostgreSQL, in small transactions like SQLite's. Any process
// may run it; one at a time does (a session-level advisory lock, tried: a
// process that finds it taken leaves this round to the holder). Each step
// holds the locks of the sessions (and waiting requests) whose rows it
// deletes, taken in the writers' order, so that a writer's evaluation never
// sees half a step and session sums stay exact.
import type { SqlPool } from './client.js';
import { ONE_HOUR } from '../../core/insights/ttl.js';
import type { PruneOptions, PruneResult } from '../store.js';
import { lockAll, requestLock, retryable, RETENTION_LOCK, sessionLock } from './locks.js';

const STEP = 2_000;

export class PgRetention {
  constructor(private readonly sql: SqlPool) {}

  async prune(options: PruneOptions): Promise<PruneResult> {
    const result: PruneResult = { turns: 0, rollups: 0 };
    return this.sql.reserve(async (session) => {
      const [{ ok } = { ok: false }] = await session<{ ok: boolean }[]>`SELECT pg_try_advisory_lock(${RETENTION_LOCK}::bigint) AS ok`;
      if (!ok) return result;
      try {
        if (options.turnsBefore !== undefined) result.turns = await this.repeat(() => this.turnStep(options.turnsBefore!));
        if (options.rollupsBefore !== undefined) result.rollups = await this.repeat(() => this.rollupStep(options.rollupsBefore!));
      } finally {
        await session`SELECT pg_advisory_unlock(${RETENTION_LOCK}::bigint)`;
      }
      return result;
    });
  }

  private async repeat(step: () => Promise<number>): Promise<number> {
    let total = 0;
    for (let failures = 0; ; ) {
      let deleted: number;
      try {
        deleted = await step();
      } catch (error) {
        if (!retryable(error) || ++failures > 5) throw error;
        continue;
      }
      total += deleted;
      if (deleted === 0) return total;
    }
  }

  /** Old turns (and their breaks) of at most STEP rows, and usages that waited past the cutoff for their snapshot. */
  private async turnStep(cutoff: number): Promise<number> {
    const old = await this.sql<{ id: number; project_id: number; session_id: string }[]>`
      SELECT t.id, s.project_id, s.session_id FROM streams s JOIN turns t ON t.stream_id = s.id
      WHERE s.first_ts < ${cutoff} AND t.ts < ${cutoff} LIMIT ${STEP}`;
    const pending = await this.sql<{ id: number; project_id: number; request_id: string }[]>`
      SELECT id, project_id, request_id FROM turns WHERE stream_id IS NULL AND coalesce(end_ts, 0) < ${cutoff} LIMIT ${STEP}`;
    if (old.length + pending.length === 0) return 0;
    return this.sql.begin(async (tx) => {
      await lockAll(tx, [...old.map((r) => sessionLock(r.project_id, r.session_id)), ...pending.map((r) => requestLock(r.project_id, r.request_id))]);
      // What a writer changed before the locks were held is checked again: only what is still old goes.
      const gone = await tx<{ id: number; stream_id: number | null }[]>`
        DELETE FROM turns WHERE id = ANY(${[...old, ...pending].map((r) => r.id)}::bigint[])
          AND ((stream_id IS NOT NULL AND ts < ${cutoff}) OR (stream_id IS NULL AND coalesce(end_ts, 0) < ${cutoff}))
        RETURNING id, stream_id`;
      if (gone.length === 0) return old.length + pending.length;
      await tx`DELETE FROM breaks WHERE turn_id = ANY(${gone.map((r) => r.id)}::bigint[])`;
      const streams = [...new Set(gone.flatMap((r) => (r.stream_id === null ? [] : [r.stream_id])))].sort((a, b) => a - b);
      if (streams.length > 0) {
        await tx`
          UPDATE streams s SET first_ts = (SELECT min(ts) FROM turns WHERE stream_id = s.id),
            last_ts = coalesce((SELECT max(ts) FROM turns WHERE stream_id = s.id), s.last_ts)
          WHERE s.id = ANY(${streams}::int[])`;
      }
      return gone.length;
    });
  }

  /** Old rollups, gap rollups and reported tokens, and streams whose turns are all gone and whose last activity is past the cutoff. */
  private async rollupStep(cutoff: number): Promise<number> {
    const minute = Math.floor(cutoff / 60_000);
    const rollups = await this.sql`
      DELETE FROM rollups WHERE ctid = ANY(ARRAY(SELECT ctid FROM rollups WHERE minute < ${minute} LIMIT ${STEP}))`;
    // Whole hours before the cutoff: an hour the cutoff falls in is kept.
    const gaps = await this.sql`
      DELETE FROM gap_rollups WHERE ctid = ANY(ARRAY(SELECT ctid FROM gap_rollups WHERE hour < ${Math.floor(cutoff / ONE_HOUR)} LIMIT ${STEP}))`;
    const reported = await this.sql`
      DELETE FROM reported_tokens WHERE ctid = ANY(ARRAY(SELECT ctid FROM reported_tokens WHERE minute < ${minute} LIMIT ${STEP}))`;
    const empty = await this.sql<{ id: number; project_id: number; session_id: string }[]>`
      SELECT id, project_id, session_id FROM streams WHERE last_ts < ${cutoff} AND first_ts IS NULL LIMIT ${STEP}`;
    let streams = 0;
    if (empty.length > 0) {
      streams = await this.sql.begin(async (tx) => {
        await lockAll(tx, empty.map((r) => sessionLock(r.project_id, r.session_id)));
        const gone = await tx`
          DELETE FROM streams WHERE id = ANY(${empty.map((r) => r.id)}::int[]) AND last_ts < ${cutoff} AND first_ts IS NULL`;
        return gone.count;
      });
    }
    return rollups.count + gaps.count + reported.count + streams;
  }
}
