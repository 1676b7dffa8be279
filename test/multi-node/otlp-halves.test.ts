// Stateless nodes for OTLP too: Claude Code's request body (api_request_body)
// exported to one node and the records that name its request id
// (api_response_body, api_request) to another, through real OpenTelemetry
// exporters, on one PostgreSQL database. Each body waits in the database for
// its response body, whichever node receives either, so every call gets its
// snapshot and the break is named by it (tools_order_changed), not `unknown`.
import { OTLPLogExporter as JsonLogExporter } from '@opentelemetry/exporter-logs-otlp-http';
import { OTLPLogExporter as ProtoLogExporter } from '@opentelemetry/exporter-logs-otlp-proto';
import { describe, expect, it } from 'vitest';
import { createPool } from '../../src/store/pg/client.js';
import { turnsOf } from '../e2e/api.js';
import { startServer } from '../e2e/server.js';
import { replayLogs } from '../otlp/replay.js';
import { fixture } from '../otlp/sources/helpers.js';
import { freshDb } from '../store-under-test.js';

const v332 = fixture('claude-code/2.1.332.json');
const SESSION = 'e8a1c3f5-2b4d-4f6a-8c0e-1a3c5e7a9b1d';
const bodies = v332.logs.filter((r) => r.attributes['event.name'] === 'api_request_body');
const rest = v332.logs.filter((r) => r.attributes['event.name'] !== 'api_request_body');

/** Turns stored with a snapshot (a prefix), of how many. */
async function withSnapshot(db: string): Promise<{ turns: number; snapshots: number }> {
  const sql = createPool(db, { max: 1, connectTimeout: 5 });
  try {
    const [row] = await sql<{ turns: number; snapshots: number }[]>`
      SELECT count(*)::int AS turns, count(prefix_id)::int AS snapshots FROM turns`;
    return row!;
  } finally {
    await sql.end();
  }
}

describe('Claude Code bodies over OTLP, split across two nodes on one PostgreSQL database', () => {
  it.each([
    ['the request bodies first', true],
    ['the response bodies and usage first', false],
  ])('%s: every call gets its snapshot, and the break its reason', { timeout: 60_000 }, async (_, bodiesFirst) => {
    const db = await freshDb('otlp-halves');
    const [a, b] = await Promise.all([startServer({ db }), startServer({ db })]);
    const toA = () => replayLogs(new JsonLogExporter({ url: `${a.url}/v1/logs` }), bodies);
    const toB = () => replayLogs(new ProtoLogExporter({ url: `${b.url}/v1/logs` }), rest);
    const results = bodiesFirst ? [...(await toA()), ...(await toB())] : [...(await toB()), ...(await toA())];
    expect(results.map((r) => r.code)).toEqual(results.map(() => 0));

    expect(await withSnapshot(db)).toEqual({ turns: 4, snapshots: 4 });
    for (const node of [a, b]) {
      const turns = await turnsOf(node.url, SESSION);
      expect(turns.map((t) => [t.requestId, t.state, t.break?.reason ?? null])).toEqual([
        ['req_011CUaA1xZ', 'cold', null],
        ['req_011CUaB2yQ', 'cold', null],
        ['req_011CUaC3zR', 'hit', null],
        ['req_011CUaD4wS', 'miss', 'tools_order_changed'],
      ]);
    }
    // Nothing is left waiting: every body found its response body.
    const sql = createPool(db, { max: 1, connectTimeout: 5 });
    try {
      expect(await sql`SELECT kind FROM waiting_halves`).toHaveLength(0);
    } finally {
      await sql.end();
    }
  });
});
