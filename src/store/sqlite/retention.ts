// Retention in small transactions: each step deletes at most STEP rows and
// then yields, so that ingest (which needs the write lock) never waits long.
import { ONE_HOUR } from '../../core/insights/ttl.js';
import type Database from 'better-sqlite3';
import type { PruneOptions, PruneResult } from '../store.js';

const STEP = 2_000;

export class Retention {
  private readonly statements;
  private readonly turnStep: (cutoff: number) => number;
  private readonly rollupStep: (cutoff: number) => number;

  constructor(sqlite: Database.Database) {
    this.statements = {
      oldTurns: sqlite.prepare<[number, number, number], { id: number; stream_id: number }>(
        `SELECT id, stream_id FROM turns
         WHERE stream_id IN (SELECT id FROM streams WHERE first_ts < ?) AND ts < ? LIMIT ?`,
      ),
      oldPending: sqlite.prepare<[number, number], { id: number }>(
        'SELECT id FROM turns WHERE stream_id IS NULL AND coalesce(end_ts, 0) < ? LIMIT ?',
      ),
      deleteTurn: sqlite.prepare('DELETE FROM turns WHERE id = ?'),
      deleteBreak: sqlite.prepare('DELETE FROM breaks WHERE turn_id = ?'),
      streamSpan: sqlite.prepare(
        `UPDATE streams SET first_ts = (SELECT min(ts) FROM turns WHERE stream_id = :id),
           last_ts = coalesce((SELECT max(ts) FROM turns WHERE stream_id = :id), last_ts) WHERE id = :id`,
      ),
      rollups: sqlite.prepare('DELETE FROM rollups WHERE rowid IN (SELECT rowid FROM rollups WHERE minute < ? LIMIT ?)'),
      // Whole hours before the cutoff: an hour the cutoff falls in is kept.
      gaps: sqlite.prepare('DELETE FROM gap_rollups WHERE rowid IN (SELECT rowid FROM gap_rollups WHERE hour < ? LIMIT ?)'),
      reported: sqlite.prepare(
        'DELETE FROM reported_tokens WHERE rowid IN (SELECT rowid FROM reported_tokens WHERE minute < ? LIMIT ?)',
      ),
      // A session whose turns are all gone and whose last activity is past rollup retention.
      streams: sqlite.prepare(
        `DELETE FROM streams WHERE id IN (SELECT id FROM streams WHERE last_ts < ? AND first_ts IS NULL LIMIT ?)`,
      ),
    };
    this.turnStep = sqlite.transaction((cutoff: number) => {
      const rows = this.statements.oldTurns.all(cutoff, cutoff, STEP);
      const pending = this.statements.oldPending.all(cutoff, STEP);
      for (const { id } of [...rows, ...pending]) {
        this.statements.deleteTurn.run(id);
        this.statements.deleteBreak.run(id);
      }
      for (const id of new Set(rows.map((r) => r.stream_id))) this.statements.streamSpan.run({ id });
      return rows.length + pending.length;
    });
    this.rollupStep = sqlite.transaction((cutoff: number) => {
      const minute = Math.floor(cutoff / 60_000);
      return (
        this.statements.rollups.run(minute, STEP).changes +
        this.statements.gaps.run(Math.floor(cutoff / ONE_HOUR), STEP).changes +
        this.statements.reported.run(minute, STEP).changes +
        this.statements.streams.run(cutoff, STEP).changes
      );
    });
  }

  async prune(options: PruneOptions): Promise<PruneResult> {
    const result: PruneResult = { turns: 0, rollups: 0 };
    if (options.turnsBefore !== undefined) result.turns = await this.repeat(() => this.turnStep(options.turnsBefore!));
    if (options.rollupsBefore !== undefined) result.rollups = await this.repeat(() => this.rollupStep(options.rollupsBefore!));
    return result;
  }

  private async repeat(step: () => number): Promise<number> {
    let total = 0;
    for (;;) {
      const deleted = step();
      total += deleted;
      if (deleted === 0) return total;
      await new Promise((resolve) => setImmediate(resolve));
    }
  }
}
