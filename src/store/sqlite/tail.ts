// What `tail` stores beside the turns: its checkpoint per followed file and
// the breaks harnesses report themselves. Writes run inside the Writer's
// transaction, so a checkpoint is durable exactly when the events it covers are.
import type Database from 'better-sqlite3';
import { and, desc, eq, inArray } from 'drizzle-orm';
import { hashString } from '../../core/hash.js';
import type { Drizzle } from '../db.js';
import { externalBreaks, tailCheckpoints } from '../schema.js';
import type { ExternalBreak, ExternalBreakFilters, Page, PageQuery, TailCheckpoint, TimeRange } from '../store.js';
import { allOf, externalBreakConditions, nextCursor, olderThan } from '../filters.js';
import { externalBreakOf } from '../summaries.js';

/** One report is one harness, session, source, time and call: the same line read twice is the same key. */
export function externalBreakKey(b: ExternalBreak): string {
  return hashString(JSON.stringify([b.harness, b.sessionId, b.source, b.ts, b.callNumber, b.reason]));
}

export class TailWriter {
  private readonly statements;

  constructor(sqlite: Database.Database) {
    this.statements = {
      checkpoint: sqlite.prepare(
        `INSERT INTO tail_checkpoints (project_id, file_id, path, offset, resume_at, resume_line, head_length, head_hash, updated_ms)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (project_id, file_id) DO UPDATE SET path = excluded.path, offset = excluded.offset,
           resume_at = excluded.resume_at, resume_line = excluded.resume_line, head_length = excluded.head_length,
           head_hash = excluded.head_hash, updated_ms = excluded.updated_ms`,
      ),
      externalBreak: sqlite.prepare(
        `INSERT OR IGNORE INTO external_breaks (project_id, key, harness, session_id, agent_id, source, ts, reason, call_number,
           previous_cache_read_tokens, current_cache_read_tokens, cache_creation_tokens, diff_path, file, line)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
    };
  }

  /** Must run inside the caller's transaction. */
  checkpoint(projectId: number, c: TailCheckpoint, now: number): void {
    this.statements.checkpoint.run(projectId, c.fileId, c.path, c.offset, c.resumeAt, c.resumeLine, c.headLength, c.headHash, now);
  }

  /** Must run inside the caller's transaction; returns the breaks that were not stored before. */
  externalBreaks(projectId: number, breaks: readonly ExternalBreak[]): ExternalBreak[] {
    return breaks.filter(
      (b) =>
        this.statements.externalBreak.run(
          projectId, externalBreakKey(b), b.harness, b.sessionId, b.agentId, b.source, b.ts, b.reason, b.callNumber,
          b.previousCacheReadTokens, b.currentCacheReadTokens, b.cacheCreationTokens, b.diffPath, b.file, b.line,
        ).changes > 0,
    );
  }
}

export function readCheckpoints(db: Drizzle, projectId: number): TailCheckpoint[] {
  const c = tailCheckpoints;
  return db
    .select({
      fileId: c.fileId,
      path: c.path,
      offset: c.offset,
      resumeAt: c.resumeAt,
      resumeLine: c.resumeLine,
      headLength: c.headLength,
      headHash: c.headHash,
    })
    .from(c)
    .where(eq(c.projectId, projectId))
    .all();
}

export function forgetCheckpoints(db: Drizzle, projectId: number, fileIds: readonly string[]): void {
  if (fileIds.length === 0) return;
  db.delete(tailCheckpoints)
    .where(and(eq(tailCheckpoints.projectId, projectId), inArray(tailCheckpoints.fileId, [...fileIds])))
    .run();
}

export function readExternalBreaks(db: Drizzle, projectId: number, range: TimeRange, filters: ExternalBreakFilters, page: PageQuery): Page<ExternalBreak> {
  const e = externalBreaks;
  const conditions = externalBreakConditions(e, projectId, range, filters);
  if (page.cursor !== undefined) conditions.push(olderThan(e.ts, e.id, page.cursor));
  const rows = db
    .select()
    .from(e)
    .where(allOf(conditions))
    .orderBy(desc(e.ts), desc(e.id))
    .limit(page.limit + 1)
    .all();
  return { items: rows.slice(0, page.limit).map(externalBreakOf), nextCursor: nextCursor(rows, page.limit, (last) => [last.ts, last.id]) };
}
