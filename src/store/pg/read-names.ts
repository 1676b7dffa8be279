// The ids a read meets (projects, labels, streams, prefixes) and their values,
// looked up in PostgreSQL before the answer is built, so that building it
// (shared with SQLite) can look them up synchronously. Projects and labels are
// never renamed, so what is found is kept; what is not found is asked again.
import type postgres from 'postgres';
import type { Prefix } from '../../core/types.js';
import type { LabelKind, StreamInfo } from '../evaluate/names.js';
import type { LabelLookup } from '../filters.js';
import { prefixOfRow, type PrefixRow } from '../evaluate/prefix-rows.js';
import type { TurnNames } from '../sqlite/rows.js';
import type { Filters } from '../store.js';

export class ReadNames {
  private readonly projects = new Map<string, number>();
  private readonly labelIds = new Map<string, number>();
  private readonly labelValues = new Map<number, string>();

  constructor(private readonly sql: postgres.Sql) {}

  /** The id of a project that exists. */
  async project(name: string): Promise<number | undefined> {
    const known = this.projects.get(name);
    if (known !== undefined) return known;
    const [row] = await this.sql<{ id: number }[]>`SELECT id FROM projects WHERE name = ${name}`;
    if (row) this.projects.set(name, row.id);
    return row?.id;
  }

  /** Looks up the labels these filters name, for `labelId`. */
  async resolve(filters: Pick<Filters, 'model' | 'provider' | 'agentId'>): Promise<void> {
    const kinds: string[] = [];
    const values: string[] = [];
    const want = (kind: LabelKind, list: string[] | undefined) => {
      for (const value of list ?? []) {
        if (this.labelIds.has(key(kind, value))) continue;
        kinds.push(kind);
        values.push(value);
      }
    };
    want('model', filters.model);
    want('provider', filters.provider);
    want('agent', filters.agentId);
    if (kinds.length === 0) return;
    const rows = await this.sql<{ id: number; kind: LabelKind; value: string }[]>`
      SELECT l.id, l.kind, l.value FROM labels l
      JOIN unnest(${kinds}::text[], ${values}::text[]) AS w(kind, value) ON l.kind = w.kind AND l.value = w.value`;
    for (const row of rows) this.remember(row);
  }

  /** Looks up the values of these label ids, for `labelValue`. */
  async load(ids: Iterable<number | null>): Promise<void> {
    const missing = [...new Set(ids)].filter((id): id is number => id !== null && !this.labelValues.has(id));
    if (missing.length === 0) return;
    const rows = await this.sql<{ id: number; kind: LabelKind; value: string }[]>`
      SELECT id, kind, value FROM labels WHERE id = ANY(${missing}::integer[])`;
    for (const row of rows) this.remember(row);
  }

  /** The id of a label `resolve` found. */
  readonly labelId: LabelLookup = (kind, value) => this.labelIds.get(key(kind, value));

  /** The value of a label id `load` found; undefined for the empty label, as SQLite's dictionary answers. */
  readonly labelValue = (id: number | null): string | undefined => {
    const value = id === null ? undefined : this.labelValues.get(id);
    return value === '' ? undefined : value;
  };

  /** The streams and prefixes these turn rows name, with their labels: what reading the rows needs. */
  async turnNames(rows: readonly { stream_id: number | null; prefix_id: number | null; snapshot_provider_id: number | null; usage_provider_id: number | null; usage_model_id: number | null }[]): Promise<TurnNames> {
    const streamIds = [...new Set(rows.flatMap((r) => (r.stream_id === null ? [] : [r.stream_id])))];
    const prefixIds = [...new Set(rows.flatMap((r) => (r.prefix_id === null ? [] : [r.prefix_id])))];
    const [streamRows, prefixRows] = await Promise.all([
      streamIds.length === 0
        ? []
        : this.sql<{ id: number; project_id: number; session_id: string; agent_id: number }[]>`
            SELECT id, project_id, session_id, agent_id FROM streams WHERE id = ANY(${streamIds}::integer[])`,
      prefixIds.length === 0
        ? []
        : this.sql<(PrefixRow & { id: number })[]>`
            SELECT p.id, p.model, p.system_hash, p.system_block_hashes, t.hash AS tools_hash, t.tools,
                   p.cache_control_hash, p.ttl_ms, p.markers, p.params, p.partial
            FROM prefixes p LEFT JOIN toolsets t ON t.id = p.toolset_id WHERE p.id = ANY(${prefixIds}::integer[])`,
    ]);
    await this.load([
      ...streamRows.map((s) => s.agent_id),
      ...rows.flatMap((r) => [r.snapshot_provider_id, r.usage_provider_id, r.usage_model_id]),
    ]);
    const streams = new Map<number, StreamInfo>(
      streamRows.map((s) => [s.id, { projectId: s.project_id, sessionId: s.session_id, agentId: this.labelValue(s.agent_id) ?? 'main' }]),
    );
    const prefixes = new Map<number, Prefix>(prefixRows.map((p) => [p.id, prefixOfRow(p)]));
    return {
      labelValue: this.labelValue,
      streamById: (id) => found(streams, id, 'stream'),
      prefixOf: (id) => found(prefixes, id, 'prefix'),
    };
  }

  private remember(row: { id: number; kind: LabelKind; value: string }): void {
    this.labelIds.set(key(row.kind, row.value), row.id);
    this.labelValues.set(row.id, row.value);
  }
}

function key(kind: LabelKind, value: string): string {
  return `${kind}\u0000${value}`;
}

function found<T>(map: ReadonlyMap<number, T>, id: number, what: string): T {
  const value = map.get(id);
  if (value === undefined) throw new Error(`${what} ${id} does not exist`);
  return value;
}
