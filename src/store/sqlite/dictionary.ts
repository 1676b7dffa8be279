// Ids for values that repeat: projects, labels, streams, tool lists and
// prefixes. Each is stored once and cached in memory, so ingest resolves most
// of them without touching SQLite.
import type Database from 'better-sqlite3';
import type { Prefix, ToolRef } from '../../core/types.js';
import type { LabelKind, Names, StreamInfo } from '../evaluate/names.js';
import { internedPrefix, prefixColumns, prefixKey, prefixOfRow, toolsetJson, type PrefixRow } from '../evaluate/prefix-rows.js';
import { Lru } from './lru.js';

export type { LabelKind, StreamInfo } from '../evaluate/names.js';

const CACHE_SIZE = 20_000;

export class Dictionary implements Names {
  private readonly labelIds = new Map<string, number>();
  private readonly labelValues = new Map<number, string>();
  private readonly streamIds = new Lru<string, number>(CACHE_SIZE);
  private readonly streamInfo = new Lru<number, StreamInfo>(CACHE_SIZE);
  private readonly prefixIds = new Lru<string, number>(CACHE_SIZE);
  private readonly prefixById = new Lru<number, Prefix>(CACHE_SIZE);
  /** Ids of the prefixes `intern` returned, so that writing one needs no key hash. */
  private idOf = new WeakMap<Prefix, number>();
  private readonly statements;

  constructor(sqlite: Database.Database) {
    this.statements = {
      project: sqlite.prepare<[string], { id: number }>('SELECT id FROM projects WHERE name = ?'),
      insertProject: sqlite.prepare('INSERT INTO projects (name) VALUES (?) ON CONFLICT DO NOTHING'),
      label: sqlite.prepare<[string, string], { id: number }>('SELECT id FROM labels WHERE kind = ? AND value = ?'),
      labelValue: sqlite.prepare<[number], { value: string }>('SELECT value FROM labels WHERE id = ?'),
      insertLabel: sqlite.prepare('INSERT INTO labels (kind, value) VALUES (?, ?) ON CONFLICT DO NOTHING'),
      stream: sqlite.prepare<[number, string, number], { id: number }>(
        'SELECT id FROM streams WHERE project_id = ? AND session_id = ? AND agent_id = ?',
      ),
      streamById: sqlite.prepare<[number], { project_id: number; session_id: string; agent_id: number }>(
        'SELECT project_id, session_id, agent_id FROM streams WHERE id = ?',
      ),
      insertStream: sqlite.prepare('INSERT INTO streams (project_id, session_id, agent_id) VALUES (?, ?, ?)'),
      toolset: sqlite.prepare<[string], { id: number }>('SELECT id FROM toolsets WHERE hash = ?'),
      insertToolset: sqlite.prepare('INSERT INTO toolsets (hash, tools) VALUES (?, ?)'),
      prefix: sqlite.prepare<[string], { id: number }>('SELECT id FROM prefixes WHERE hash = ?'),
      insertPrefix: sqlite.prepare(
        `INSERT INTO prefixes (hash, model, system_hash, system_block_hashes, toolset_id, cache_control_hash, ttl_ms, markers, params, partial)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      prefixById: sqlite.prepare<[number], PrefixRow      >(
        `SELECT p.model, p.system_hash, p.system_block_hashes, t.hash AS tools_hash, t.tools,
                p.cache_control_hash, p.ttl_ms, p.markers, p.params, p.partial
         FROM prefixes p LEFT JOIN toolsets t ON t.id = p.toolset_id WHERE p.id = ?`,
      ),
    };
  }

  /** The id of a project, created on first use. */
  project(name: string): number {
    const found = this.statements.project.get(name);
    if (found) return found.id;
    this.statements.insertProject.run(name);
    return this.statements.project.get(name)!.id;
  }

  /** The id of a project that exists, without creating it. */
  existingProject(name: string): number | undefined {
    return this.statements.project.get(name)?.id;
  }

  label(kind: LabelKind, value: string | undefined): number {
    const text = value ?? '';
    const key = kind + '\u0000' + text;
    const cached = this.labelIds.get(key);
    if (cached !== undefined) return cached;
    let row = this.statements.label.get(kind, text);
    if (!row) {
      this.statements.insertLabel.run(kind, text);
      row = this.statements.label.get(kind, text)!;
    }
    this.labelIds.set(key, row.id);
    this.labelValues.set(row.id, text);
    return row.id;
  }

  existingLabel(kind: LabelKind, value: string): number | undefined {
    const cached = this.labelIds.get(kind + '\u0000' + value);
    return cached ?? this.statements.label.get(kind, value)?.id;
  }

  labelValue(id: number | null): string | undefined {
    if (id === null) return undefined;
    let value = this.labelValues.get(id);
    if (value === undefined) {
      value = this.statements.labelValue.get(id)?.value ?? '';
      this.labelValues.set(id, value);
    }
    return value === '' ? undefined : value;
  }

  stream(projectId: number, sessionId: string, agentId: string): number {
    const agent = this.label('agent', agentId);
    const key = `${projectId}\u0000${agent}\u0000${sessionId}`;
    const cached = this.streamIds.get(key);
    if (cached !== undefined) return cached;
    let id = this.statements.stream.get(projectId, sessionId, agent)?.id;
    if (id === undefined) id = Number(this.statements.insertStream.run(projectId, sessionId, agent).lastInsertRowid);
    this.streamInfo.set(id, { projectId, sessionId, agentId });
    return this.streamIds.set(key, id);
  }

  /** The id of a stream that exists, without creating it. */
  existingStream(projectId: number, sessionId: string, agentId: string): number | undefined {
    const agent = this.existingLabel('agent', agentId);
    if (agent === undefined) return undefined;
    const key = `${projectId}\u0000${agent}\u0000${sessionId}`;
    const cached = this.streamIds.get(key);
    if (cached !== undefined) return cached;
    const id = this.statements.stream.get(projectId, sessionId, agent)?.id;
    if (id === undefined) return undefined;
    this.streamInfo.set(id, { projectId, sessionId, agentId });
    return this.streamIds.set(key, id);
  }

  streamById(id: number): StreamInfo {
    const cached = this.streamInfo.get(id);
    if (cached) return cached;
    const row = this.statements.streamById.get(id);
    if (!row) throw new Error(`stream ${id} does not exist`);
    const info = { projectId: row.project_id, sessionId: row.session_id, agentId: this.labelValue(row.agent_id) ?? 'main' };
    return this.streamInfo.set(id, info);
  }

  /**
   * The stored prefix equal to `prefix`, with the turn's own message hashes
   * and message markers: turns of a stream share one object instead of each
   * holding the tool list its event carried, which is what lets the stream
   * tails of tens of thousands of streams stay in memory.
   */
  intern(prefix: Prefix): Prefix {
    const id = this.prefix(prefix);
    const interned = internedPrefix(this.prefixOf(id), prefix);
    this.idOf.set(interned, id);
    return interned;
  }

  /** The id of a prefix (message hashes and message markers aside), stored once per distinct content. */
  prefix(prefix: Prefix): number {
    const known = this.idOf.get(prefix);
    if (known !== undefined) return known;
    const key = prefixKey(prefix);
    const cached = this.prefixIds.get(key);
    if (cached !== undefined) return cached;
    let id = this.statements.prefix.get(key)?.id;
    if (id === undefined) {
      const toolsetId = prefix.tools && prefix.toolsHash ? this.toolset(prefix.toolsHash, prefix.tools) : null;
      const c = prefixColumns(prefix);
      const inserted = this.statements.insertPrefix.run(
        key, c.model, c.systemHash, c.systemBlockHashes, toolsetId, c.cacheControlHash, c.ttlMs, c.markers, c.params, c.partial,
      );
      id = Number(inserted.lastInsertRowid);
    }
    return this.prefixIds.set(key, id);
  }

  private toolset(hash: string, tools: readonly ToolRef[]): number {
    const found = this.statements.toolset.get(hash);
    if (found) return found.id;
    return Number(this.statements.insertToolset.run(hash, toolsetJson(tools)).lastInsertRowid);
  }

  /** The stored prefix, without message hashes (those belong to each turn). */
  prefixOf(id: number): Prefix {
    const cached = this.prefixById.get(id);
    if (cached) return cached;
    const row = this.statements.prefixById.get(id);
    if (!row) throw new Error(`prefix ${id} does not exist`);
    const prefix = prefixOfRow(row);
    return this.prefixById.set(id, prefix);
  }

  /** Forgets cached ids, after a transaction that created some was rolled back. */
  forget(): void {
    this.labelIds.clear();
    this.labelValues.clear();
    this.streamIds.clear();
    this.streamInfo.clear();
    this.prefixIds.clear();
    this.prefixById.clear();
    this.idOf = new WeakMap();
  }
}
