// API keys in PostgreSQL: looked up by the hash of the key, never by the key.
// Every process reads them from the database, so a key created or revoked on
// one is seen by all.
import { fragment, type Fragment, type SqlPool } from './client.js';
import type { ApiKey, KeyState, Scope } from '../store.js';
import { toKey, type KeyRow } from '../sqlite/keys.js';
import type { PgNames } from './names.js';

type Row = KeyRow & { hash: string };

export class PgKeyStore {
  constructor(
    private readonly sql: SqlPool,
    private readonly names: PgNames,
  ) {}

  private select(where: Fragment) {
    return this.sql<Row[]>`
      SELECT k.id, p.name AS project, k.hash, k.prefix, k.scopes, k.name, k.created_ms AS "createdMs", k.revoked_ms AS "revokedMs"
      FROM api_keys k JOIN projects p ON p.id = k.project_id ${where} ORDER BY k.id`;
  }

  async create(key: { project: string; hash: string; prefix: string; scopes: Scope[]; name: string | null; createdMs: number }): Promise<ApiKey> {
    const projectId = await this.names.project(key.project);
    const [row] = await this.sql<{ id: number }[]>`
      INSERT INTO api_keys (project_id, hash, prefix, scopes, name, created_ms)
      VALUES (${projectId}, ${key.hash}, ${key.prefix}, ${key.scopes.join(',')}, ${key.name}, ${key.createdMs}) RETURNING id`;
    return toKey((await this.select(fragment`WHERE k.id = ${row!.id}`))[0]!);
  }

  async byPrefix(prefix: string): Promise<(ApiKey & { hash: string })[]> {
    return (await this.select(fragment`WHERE k.prefix = ${prefix}`)).map((row) => ({ ...toKey(row), hash: row.hash }));
  }

  async withHashes(): Promise<(ApiKey & { hash: string })[]> {
    return (await this.select(fragment``)).map((row) => ({ ...toKey(row), hash: row.hash }));
  }

  async list(): Promise<ApiKey[]> {
    return (await this.select(fragment``)).map(toKey);
  }

  async revoke(idOrPrefix: string, revokedMs: number): Promise<ApiKey | undefined> {
    const match = /^\d+$/.test(idOrPrefix) ? fragment`k.id = ${Number(idOrPrefix)}` : fragment`k.prefix = ${idOrPrefix}`;
    const [row] = await this.select(fragment`WHERE ${match}`);
    if (!row) return undefined;
    // Revoked once: a second revocation (here or on another process) keeps the first time.
    await this.sql`UPDATE api_keys SET revoked_ms = ${revokedMs} WHERE id = ${row.id} AND revoked_ms IS NULL`;
    return toKey((await this.select(fragment`WHERE k.id = ${row.id}`))[0]!);
  }

  async hasActive(): Promise<boolean> {
    return (await this.sql`SELECT 1 FROM api_keys WHERE revoked_ms IS NULL LIMIT 1`).length > 0;
  }

  async state(): Promise<KeyState> {
    const [row] = await this.sql<{ active: boolean; any: boolean }[]>`
      SELECT EXISTS (SELECT 1 FROM api_keys WHERE revoked_ms IS NULL) AS active, EXISTS (SELECT 1 FROM api_keys) AS any`;
    return row!.active ? 'active' : row!.any ? 'revoked' : 'none';
  }
}
