// OTLP join halves waiting in the database (waiting_halves, see schema.ts):
// each pairing is one transaction, so a half is taken once.
import type Database from 'better-sqlite3';
import { chosen, partnerKeys } from '../pairing.js';
import type { Pairing, WaitBounds, WaitingHalf } from '../store.js';

/** Deletes every half of the project but the newest that together hold at most maxBytes; returns their kinds. */
const EVICT_SQL = `
  DELETE FROM waiting_halves WHERE id IN (
    SELECT id FROM (
      SELECT id, SUM(bytes) OVER (ORDER BY id DESC) AS newer FROM waiting_halves WHERE project_id = ?
    ) AS t WHERE newer > ?
  ) RETURNING kind`;

export class HalfStore {
  private readonly pairStep;
  readonly trim;

  constructor(sqlite: Database.Database) {
    const statements = {
      expired: sqlite.prepare('DELETE FROM waiting_halves WHERE project_id = ? AND expires_ms <= ?'),
      others: sqlite.prepare<[number, string, string, string, string, number], WaitingHalf & { id: number }>(
        'SELECT id, key, kind, value, bytes FROM waiting_halves WHERE project_id = ? AND key IN (?, ?, ?) AND kind <> ? AND expires_ms > ? ORDER BY id',
      ),
      take: sqlite.prepare('DELETE FROM waiting_halves WHERE id = ?'),
      wait: sqlite.prepare(
        `INSERT INTO waiting_halves (project_id, key, kind, value, bytes, expires_ms) VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT (project_id, key, kind) DO UPDATE SET value = excluded.value, bytes = excluded.bytes, expires_ms = excluded.expires_ms`,
      ),
      evict: sqlite.prepare<[number, number], { kind: string }>(EVICT_SQL),
      trim: sqlite.prepare('DELETE FROM waiting_halves WHERE expires_ms <= ?'),
    };
    this.pairStep = sqlite.transaction((projectId: number, half: WaitingHalf, bounds: WaitBounds, pair: boolean): Pairing => {
      statements.expired.run(projectId, bounds.now);
      if (pair) {
        const others = statements.others.all(projectId, ...partnerKeys(half), half.kind, bounds.now);
        const other = others[chosen(half, others)];
        if (other !== undefined) {
          statements.take.run(other.id);
          const { id, ...taken } = other;
          return { other: taken, evicted: [] };
        }
      }
      // Kept, it would push out every other half and still not fit.
      if (half.bytes > bounds.maxBytes) return { other: undefined, evicted: [half.kind] };
      statements.wait.run(projectId, half.key, half.kind, half.value, half.bytes, bounds.now + bounds.maxAgeMs);
      return { other: undefined, evicted: statements.evict.all(projectId, bounds.maxBytes).map((r) => r.kind) };
    });
    this.trim = (now: number): number => statements.trim.run(now).changes;
  }

  pair(projectId: number, half: WaitingHalf, bounds: WaitBounds, pair: boolean): Pairing {
    return this.pairStep(projectId, half, bounds, pair);
  }
}
