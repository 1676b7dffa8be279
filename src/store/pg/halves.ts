// OTLP join halves waiting in the database (waiting_halves, see schema.ts),
// for every process sharing it: each pairing is one transaction under its
// project's lock, so that the two halves of a join arriving at two processes
// at once never both wait, and a half is taken once.
import type { SqlPool } from './client.js';
import { halvesLock, lockAll } from './locks.js';
import type { PgNames } from './names.js';
import { chosen, partnerKeys } from '../pairing.js';
import type { Pairing, WaitBounds, WaitingHalf } from '../store.js';

export class PgHalfStore {
  constructor(
    private readonly sql: SqlPool,
    private readonly names: PgNames,
  ) {}

  async pair(project: string, half: WaitingHalf, bounds: WaitBounds, pair: boolean): Promise<Pairing> {
    const projectId = await this.names.project(project);
    return this.sql.begin(async (tx) => {
      await lockAll(tx, [halvesLock(projectId)]);
      await tx`DELETE FROM waiting_halves WHERE project_id = ${projectId} AND expires_ms <= ${bounds.now}`;
      if (pair) {
        const others = await tx<(WaitingHalf & { id: number })[]>`
          SELECT id, key, kind, value, bytes FROM waiting_halves
          WHERE project_id = ${projectId} AND key = ANY(${partnerKeys(half)}::text[]) AND kind <> ${half.kind} ORDER BY id`;
        const other = others[chosen(half, others)];
        if (other !== undefined) {
          await tx`DELETE FROM waiting_halves WHERE id = ${other.id}`;
          const { id, ...taken } = other;
          return { other: taken, evicted: [] };
        }
      }
      // Kept, it would push out every other half and still not fit.
      if (half.bytes > bounds.maxBytes) return { other: undefined, evicted: [half.kind] };
      await tx`
        INSERT INTO waiting_halves (project_id, key, kind, value, bytes, expires_ms)
        VALUES (${projectId}, ${half.key}, ${half.kind}, ${half.value}, ${half.bytes}, ${bounds.now + bounds.maxAgeMs})
        ON CONFLICT (project_id, key, kind) DO UPDATE SET value = excluded.value, bytes = excluded.bytes, expires_ms = excluded.expires_ms`;
      const evicted = await tx<{ kind: string }[]>`
        DELETE FROM waiting_halves WHERE id IN (
          SELECT id FROM (
            SELECT id, SUM(bytes) OVER (ORDER BY id DESC) AS newer FROM waiting_halves WHERE project_id = ${projectId}
          ) AS t WHERE newer > ${bounds.maxBytes}
        ) RETURNING kind`;
      return { other: undefined, evicted: evicted.map((r) => r.kind) };
    });
  }

  async trim(now: number): Promise<number> {
    return (await this.sql`DELETE FROM waiting_halves WHERE expires_ms <= ${now}`).count;
  }
}
