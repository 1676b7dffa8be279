// API keys in SQLite: looked up by the hash of the key, never by the key.
import { eq, isNull } from 'drizzle-orm';
import type { Drizzle } from '../db.js';
import { apiKeys, projects } from '../schema.js';
import type { ApiKey, KeyState, Scope } from '../store.js';
import type { Dictionary } from './dictionary.js';

/** A key's row as read (in any store), with its project's name. */
export type KeyRow = Pick<typeof apiKeys.$inferSelect, 'id' | 'prefix' | 'scopes' | 'name' | 'createdMs' | 'revokedMs'> & { project: string };

export function toKey(row: KeyRow): ApiKey {
  return {
    id: row.id,
    project: row.project,
    prefix: row.prefix,
    scopes: row.scopes.split(',') as Scope[],
    name: row.name,
    createdMs: row.createdMs,
    revokedMs: row.revokedMs,
  };
}

export class KeyStore {
  constructor(
    private readonly db: Drizzle,
    private readonly dictionary: Dictionary,
  ) {}

  private select() {
    return this.db
      .select({
        id: apiKeys.id,
        projectId: apiKeys.projectId,
        hash: apiKeys.hash,
        prefix: apiKeys.prefix,
        scopes: apiKeys.scopes,
        name: apiKeys.name,
        createdMs: apiKeys.createdMs,
        revokedMs: apiKeys.revokedMs,
        project: projects.name,
      })
      .from(apiKeys)
      .innerJoin(projects, eq(projects.id, apiKeys.projectId));
  }

  create(key: { project: string; hash: string; prefix: string; scopes: Scope[]; name: string | null; createdMs: number }): ApiKey {
    const [row] = this.db
      .insert(apiKeys)
      .values({
        projectId: this.dictionary.project(key.project),
        hash: key.hash,
        prefix: key.prefix,
        scopes: key.scopes.join(','),
        name: key.name,
        createdMs: key.createdMs,
      })
      .returning({ id: apiKeys.id })
      .all();
    return this.byId(row!.id)!;
  }

  byPrefix(prefix: string): (ApiKey & { hash: string })[] {
    return this.select()
      .where(eq(apiKeys.prefix, prefix))
      .all()
      .map((row) => ({ ...toKey(row), hash: row.hash }));
  }

  withHashes(): (ApiKey & { hash: string })[] {
    return this.select()
      .orderBy(apiKeys.id)
      .all()
      .map((row) => ({ ...toKey(row), hash: row.hash }));
  }

  private byId(id: number): ApiKey | undefined {
    const row = this.select().where(eq(apiKeys.id, id)).get();
    return row ? toKey(row) : undefined;
  }

  list(): ApiKey[] {
    return this.select().orderBy(apiKeys.id).all().map(toKey);
  }

  revoke(idOrPrefix: string, revokedMs: number): ApiKey | undefined {
    const match = /^\d+$/.test(idOrPrefix) ? eq(apiKeys.id, Number(idOrPrefix)) : eq(apiKeys.prefix, idOrPrefix);
    const row = this.select().where(match).get();
    if (!row) return undefined;
    if (row.revokedMs === null) this.db.update(apiKeys).set({ revokedMs }).where(eq(apiKeys.id, row.id)).run();
    return this.byId(row.id);
  }

  hasActive(): boolean {
    return this.db.select({ id: apiKeys.id }).from(apiKeys).where(isNull(apiKeys.revokedMs)).limit(1).all().length > 0;
  }

  state(): KeyState {
    if (this.hasActive()) return 'active';
    return this.db.select({ id: apiKeys.id }).from(apiKeys).limit(1).all().length > 0 ? 'revoked' : 'none';
  }
}
