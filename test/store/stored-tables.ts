// Everything a store keeps for one project, read straight from its tables with
// ids replaced by the values they stand for: two stores (SQLite, PostgreSQL)
// that stored the same events must hold equal tables.
import type { PgStore } from '../../src/store/pg/store.js';
import type { SqliteStore } from '../../src/store/sqlite/store.js';

const SUMS = 'turns, measured, unmeasured_input, uncached, read, write, write_1h, output, breaks, missed, extra_cost_micro_usd, unpriced';

/** One query per table, in SQL that SQLite and PostgreSQL both read; `?` is the project name. */
const QUERIES = {
  turns: `SELECT t.request_id, s.session_id, a.value AS agent, t.ts, p.hash AS prefix, sp.value AS snapshot_provider, t.expect_miss,
      t.message_hashes, t.message_markers, t.end_ts, t.ttft_ms, up.value AS usage_provider, um.value AS usage_model, t.uncached, t.read,
      t.write, t.write_1h, t.output, t.cache_reported, t.write_reported, t.diagnostics, t.state, t.tiers, t.gap_bucket, t.gap_stake,
      t.gap_rewritten
    FROM turns t JOIN projects pr ON pr.id = t.project_id LEFT JOIN streams s ON s.id = t.stream_id LEFT JOIN labels a ON a.id = s.agent_id
      LEFT JOIN prefixes p ON p.id = t.prefix_id LEFT JOIN labels sp ON sp.id = t.snapshot_provider_id
      LEFT JOIN labels up ON up.id = t.usage_provider_id LEFT JOIN labels um ON um.id = t.usage_model_id
    WHERE pr.name = ?`,
  breaks: `SELECT t.request_id, s.session_id, b.ts, m.value AS model, pv.value AS provider, a.value AS agent, b.reason, b.record, b.cause,
      b.missed, b.extra_cost_usd, b.changed_tools
    FROM breaks b JOIN projects pr ON pr.id = b.project_id JOIN turns t ON t.id = b.turn_id JOIN streams s ON s.id = b.stream_id
      JOIN labels m ON m.id = b.model_id JOIN labels pv ON pv.id = b.provider_id JOIN labels a ON a.id = b.agent_id
    WHERE pr.name = ?`,
  rollups: `SELECT r.minute, m.value AS model, pv.value AS provider, a.value AS agent, r.state, r.reason, ${SUMS}
    FROM rollups r JOIN projects pr ON pr.id = r.project_id JOIN labels m ON m.id = r.model_id JOIN labels pv ON pv.id = r.provider_id
      JOIN labels a ON a.id = r.agent_id
    WHERE pr.name = ?`,
  streams: `SELECT s.session_id, a.value AS agent, s.first_ts, s.last_ts, s.max_flight_ms, ${SUMS.split(', ').map((c) => `s.${c}`).join(', ')}
    FROM streams s JOIN projects pr ON pr.id = s.project_id JOIN labels a ON a.id = s.agent_id WHERE pr.name = ?`,
  sessions: `SELECT s.session_id, s.first_ts, s.last_ts, s.rate_rank, ${SUMS.split(', ').map((c) => `s.${c}`).join(', ')}
    FROM sessions s JOIN projects pr ON pr.id = s.project_id WHERE pr.name = ?`,
  breakCauses: `SELECT r.minute, m.value AS model, pv.value AS provider, a.value AS agent, r.reason, r.cause, r.breaks, r.missed,
      r.extra_cost_micro_usd, r.unpriced
    FROM break_cause_rollups r JOIN projects pr ON pr.id = r.project_id JOIN labels m ON m.id = r.model_id
      JOIN labels pv ON pv.id = r.provider_id JOIN labels a ON a.id = r.agent_id
    WHERE pr.name = ? AND (r.breaks <> 0 OR r.missed <> 0 OR r.extra_cost_micro_usd <> 0 OR r.unpriced <> 0)`,
  breakTools: `SELECT r.minute, m.value AS model, pv.value AS provider, a.value AS agent, r.reason, r.tool, r.breaks
    FROM break_tool_rollups r JOIN projects pr ON pr.id = r.project_id JOIN labels m ON m.id = r.model_id
      JOIN labels pv ON pv.id = r.provider_id JOIN labels a ON a.id = r.agent_id
    WHERE pr.name = ? AND r.breaks <> 0`,
  gapRollups: `SELECT g.hour, s.session_id, a.value AS agent, m.value AS model, pv.value AS provider, g.bucket, g.turns, g.stake, g.rewritten,
      g.written, g.written_1h
    FROM gap_rollups g JOIN projects pr ON pr.id = g.project_id JOIN streams s ON s.id = g.stream_id JOIN labels a ON a.id = s.agent_id
      JOIN labels m ON m.id = g.model_id JOIN labels pv ON pv.id = g.provider_id
    WHERE pr.name = ?`,
  reportedTokens: `SELECT r.minute, r.source, m.value AS model, r.kind, r.tokens
    FROM reported_tokens r JOIN projects pr ON pr.id = r.project_id JOIN labels m ON m.id = r.model_id WHERE pr.name = ?`,
};

export type StoredTables = Record<keyof typeof QUERIES, Record<string, unknown>[]>;

/** Values as both drivers would agree on them: blobs as hex, booleans as 0/1, JSON parsed, rows sorted. */
function normalized(rows: Record<string, unknown>[]): Record<string, unknown>[] {
  const out = rows.map((row) =>
    Object.fromEntries(
      Object.entries(row).map(([k, v]) => {
        if (Buffer.isBuffer(v)) return [k, v.toString('hex')];
        if (typeof v === 'boolean') return [k, v ? 1 : 0];
        if (typeof v === 'bigint') return [k, Number(v)];
        if (typeof v === 'string' && (k === 'record' || k === 'changed_tools')) return [k, JSON.parse(v)];
        return [k, v];
      }),
    ),
  );
  return out.sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1));
}

export function sqliteTables(store: SqliteStore, project: string): StoredTables {
  const out = {} as StoredTables;
  for (const [name, query] of Object.entries(QUERIES)) {
    out[name as keyof StoredTables] = normalized(store.sqlite.prepare(query).all(project) as Record<string, unknown>[]);
  }
  return out;
}

export async function pgTables(store: PgStore, project: string): Promise<StoredTables> {
  const out = {} as StoredTables;
  for (const [name, query] of Object.entries(QUERIES)) {
    const rows = await store.sql.unsafe(query.replace('?', '$1'), [project]);
    out[name as keyof StoredTables] = normalized(rows.map((r) => ({ ...r })));
  }
  return out;
}
