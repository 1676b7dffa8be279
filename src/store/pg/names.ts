// Ids for values that repeat (projects, labels, tool lists, prefixes) in
// PostgreSQL. They never change once stored, so every process caches them;
// they are resolved in batches before a transaction's evaluation, which then
// reads them synchronously (the Names interface). Streams are not cached
// across transactions: retention on another process may delete them.
import type { Sql, SqlPool } from './client.js';
import type { Prefix } from '../../core/types.js';
import type { LabelKind, Names, StreamInfo } from '../evaluate/names.js';
import { internedPrefix, prefixColumns, prefixKey, prefixOfRow, toolsetJson, type PrefixRow } from '../evaluate/prefix-rows.js';
import { Lru } from '../sqlite/lru.js';

const CACHE_SIZE = 20_000;


export class PgNames implements Names {
  private readonly projectIds = new Map<string, number>();
  private readonly labelIds = new Map<string, number>();
  private readonly labelValues = new Map<number, string>();
  private readonly prefixIds = new Lru<string, number>(CACHE_SIZE);
  private readonly prefixById = new Lru<number, Prefix>(CACHE_SIZE);
  private idOf = new WeakMap<Prefix, number>();
  constructor(private readonly sql: SqlPool) {}

  // --- projects ---

  async project(name: string): Promise<number> {
    const known = this.projectIds.get(name);
    if (known !== undefined) return known;
    await this.sql`INSERT INTO projects (name) VALUES (${name}) ON CONFLICT DO NOTHING`;
    return (await this.existingProject(name))!;
  }

  async existingProject(name: string): Promise<number | undefined> {
    const known = this.projectIds.get(name);
    if (known !== undefined) return known;
    const [row] = await this.sql<{ id: number }[]>`SELECT id FROM projects WHERE name = ${name}`;
    if (row) this.projectIds.set(name, row.id);
    return row?.id;
  }

  // --- resolving, before evaluation ---

  /** Stores the labels not yet known (each committed at once: they never change) and caches their ids. */
  async resolveLabels(wanted: Iterable<[LabelKind, string | undefined]>): Promise<void> {
    const { kinds, values } = this.unknownLabels(wanted);
    if (kinds.length === 0) return;
    await this.sql`INSERT INTO labels (kind, value) SELECT * FROM unnest(${kinds}::text[], ${values}::text[]) ORDER BY 1, 2 ON CONFLICT DO NOTHING`;
    await this.findLabels(kinds, values, this.sql);
  }

  /**
   * Caches the ids of labels that stored turns count under. Whoever stored a
   * turn stored its labels first, so they are found; inside a write's
   * transaction nothing is inserted, which a rollback would take back from
   * under the cache.
   */
  async existingLabels(wanted: Iterable<[LabelKind, string | undefined]>, sql: Sql): Promise<void> {
    const { kinds, values } = this.unknownLabels(wanted);
    if (kinds.length === 0) return;
    await this.findLabels(kinds, values, sql);
    const missing = kinds.filter((kind, i) => !this.labelIds.has(kind + '\u0000' + values[i]));
    if (missing.length > 0) throw new Error(`labels of stored turns are missing from the labels table (${missing.length})`);
  }

  private unknownLabels(wanted: Iterable<[LabelKind, string | undefined]>): { kinds: string[]; values: string[] } {
    const kinds: string[] = [];
    const values: string[] = [];
    const seen = new Set<string>();
    for (const [kind, value] of wanted) {
      const key = kind + '\u0000' + (value ?? '');
      if (this.labelIds.has(key) || seen.has(key)) continue;
      seen.add(key);
      kinds.push(kind);
      values.push(value ?? '');
    }
    return { kinds, values };
  }

  /** Caches the ids of the labels stored with these values (for existingLabel), storing none: what reads filter on. */
  async findLabels(kinds: readonly string[], values: readonly string[], sql: Sql = this.sql): Promise<void> {
    if (kinds.length === 0) return;
    const rows = await sql<{ id: number; kind: string; value: string }[]>`
      SELECT l.id, l.kind, l.value FROM labels l JOIN unnest(${kinds}::text[], ${values}::text[]) AS w(kind, value)
        ON l.kind = w.kind AND l.value = w.value`;
    for (const row of rows) this.remember(row);
  }

  /** Caches the values of label ids read from stored rows. */
  async loadLabels(ids: Iterable<number | null>, sql: Sql = this.sql): Promise<void> {
    const missing = [...new Set([...ids].filter((id): id is number => id !== null && !this.labelValues.has(id)))];
    if (missing.length === 0) return;
    for (const row of await sql<{ id: number; kind: string; value: string }[]>`SELECT id, kind, value FROM labels WHERE id = ANY(${missing}::int[])`) {
      this.remember(row);
    }
  }

  private remember(row: { id: number; kind: string; value: string }): void {
    this.labelIds.set(row.kind + '\u0000' + row.value, row.id);
    this.labelValues.set(row.id, row.value);
  }

  /**
   * Stores the prefixes (and tool lists) not yet known, in one statement, and
   * caches their ids and stored forms (a stored prefix is its columns: its
   * form is known without reading it back). DO UPDATE, not DO NOTHING: it
   * returns the rows that exist too, those another process is inserting at
   * the same moment included, which a read in the same statement would miss.
   */
  async resolvePrefixes(prefixes: Iterable<Prefix>): Promise<void> {
    const byKey = new Map<string, Prefix>();
    for (const prefix of prefixes) {
      if (this.idOf.has(prefix)) continue;
      const key = prefixKey(prefix);
      if (this.prefixIds.get(key) === undefined) byKey.set(key, prefix);
    }
    if (byKey.size === 0) return;
    const keys = [...byKey.keys()].sort();
    const rows = keys.map((key): PrefixRow & { hash: string } => {
      const prefix = byKey.get(key)!;
      const c = prefixColumns(prefix);
      const tools = prefix.tools && prefix.toolsHash ? prefix.tools : undefined;
      return {
        hash: key,
        model: c.model,
        system_hash: c.systemHash,
        system_block_hashes: c.systemBlockHashes,
        tools_hash: tools ? prefix.toolsHash! : null,
        tools: tools ? toolsetJson(tools) : null,
        cache_control_hash: c.cacheControlHash,
        ttl_ms: c.ttlMs,
        markers: c.markers,
        params: c.params,
        partial: c.partial,
      };
    });
    const col = <K extends keyof (typeof rows)[number]>(k: K) => rows.map((r) => r[k]) as never;
    const toolsets = new Map(rows.flatMap((r) => (r.tools_hash === null ? [] : [[r.tools_hash, r.tools!] as const])));
    const toolHashes = [...toolsets.keys()].sort();
    const found = await this.sql<{ id: number; hash: string }[]>`
      WITH new_toolsets AS (
        INSERT INTO toolsets (hash, tools) SELECT * FROM unnest(${toolHashes}::text[], ${toolHashes.map((h) => toolsets.get(h)!)}::text[])
        ON CONFLICT (hash) DO UPDATE SET hash = excluded.hash RETURNING id, hash
      ), prefix_rows AS (
        INSERT INTO prefixes (hash, model, system_hash, system_block_hashes, toolset_id, cache_control_hash, ttl_ms, markers, params, partial)
        SELECT p.hash, p.model, p.system_hash, p.system_block_hashes, t.id, p.cache_control_hash, p.ttl_ms, p.markers, p.params, p.partial
        FROM unnest(${keys}::text[], ${col('model')}::text[], ${col('system_hash')}::text[], ${col('system_block_hashes')}::text[],
                    ${col('tools_hash')}::text[], ${col('cache_control_hash')}::text[], ${col('ttl_ms')}::bigint[], ${col('markers')}::text[],
                    ${col('params')}::text[], ${col('partial')}::text[])
          AS p(hash, model, system_hash, system_block_hashes, tools_hash, cache_control_hash, ttl_ms, markers, params, partial)
        LEFT JOIN new_toolsets t ON t.hash = p.tools_hash
        ORDER BY p.hash
        ON CONFLICT (hash) DO UPDATE SET hash = excluded.hash RETURNING id, hash
      )
      SELECT id, hash FROM prefix_rows`;
    const stored = new Map(rows.map((r) => [r.hash, r]));
    for (const { id, hash } of found) {
      this.prefixIds.set(hash, id);
      if (this.prefixById.get(id) === undefined) this.prefixById.set(id, prefixOfRow(stored.get(hash)!));
    }
  }

  /** Caches the stored forms of prefix ids read from stored rows. */
  async loadPrefixes(ids: Iterable<number | null>, sql: Sql = this.sql): Promise<void> {
    const missing = [...new Set([...ids].filter((id): id is number => id !== null && this.prefixById.get(id) === undefined))];
    if (missing.length === 0) return;
    const rows = await sql<(PrefixRow & { id: number })[]>`
      SELECT p.id, p.model, p.system_hash, p.system_block_hashes, t.hash AS tools_hash, t.tools,
             p.cache_control_hash, p.ttl_ms, p.markers, p.params, p.partial
      FROM prefixes p LEFT JOIN toolsets t ON t.id = p.toolset_id WHERE p.id = ANY(${missing}::int[])`;
    for (const row of rows) this.prefixById.set(row.id, prefixOfRow(row));
  }

  /** These names with the streams one transaction holds (the sessions it has locked). */
  withStreams(streams: ReadonlyMap<number, StreamInfo>): Names {
    const streamById = (id: number): StreamInfo => {
      const info = streams.get(id);
      if (!info) throw new Error(`stream ${id} is not held by this transaction`);
      return info;
    };
    return {
      label: (kind, value) => this.label(kind, value),
      labelValue: (id) => this.labelValue(id),
      streamById,
      prefixOf: (id) => this.prefixOf(id),
      prefix: (prefix) => this.prefix(prefix),
      intern: (prefix) => this.intern(prefix),
    };
  }

  // --- Names, synchronously from what was resolved ---

  label(kind: LabelKind, value: string | undefined): number {
    const id = this.labelIds.get(kind + '\u0000' + (value ?? ''));
    if (id === undefined) throw new Error(`label ${kind} "${value ?? ''}" was not resolved before evaluation`);
    return id;
  }

  existingLabel(kind: LabelKind, value: string): number | undefined {
    return this.labelIds.get(kind + '\u0000' + value);
  }

  labelValue(id: number | null): string | undefined {
    if (id === null) return undefined;
    const value = this.labelValues.get(id);
    if (value === undefined) throw new Error(`label ${id} was not loaded before evaluation`);
    return value === '' ? undefined : value;
  }

  streamById(id: number): StreamInfo {
    throw new Error(`stream ${id}: streams are known only to a transaction (withStreams)`);
  }

  prefixOf(id: number): Prefix {
    const prefix = this.prefixById.get(id);
    if (!prefix) throw new Error(`prefix ${id} was not loaded before evaluation`);
    return prefix;
  }

  prefix(prefix: Prefix): number {
    const known = this.idOf.get(prefix);
    if (known !== undefined) return known;
    const id = this.prefixIds.get(prefixKey(prefix));
    if (id === undefined) throw new Error('a prefix was not resolved before evaluation');
    return id;
  }

  intern(prefix: Prefix): Prefix {
    const id = this.prefix(prefix);
    const interned = internedPrefix(this.prefixOf(id), prefix);
    this.idOf.set(interned, id);
    return interned;
  }
}
