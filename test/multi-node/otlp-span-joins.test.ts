// Stateless nodes for Gemini CLI and Qwen Code too: a harness's spans (the
// `llm_call` span with the tool declarations and system instructions; the
// `llm_request` span with the context usage) exported to one node and its log
// records (api_request, api_response) to another, through real OpenTelemetry
// exporters, on one PostgreSQL database. The call known from the logs and its
// span's prefix wait for each other in the database, whichever comes first,
// so every turn gets the snapshot one node would give it and each break its
// reason (tools_schema_changed, system_changed), not `unknown`. A call's two
// log records, api_request (its messages) and api_response (its usage), are
// paired through the database too, whichever node each reaches.
import { OTLPLogExporter } from '@opentelemetry/exporter-logs-otlp-proto';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { describe, expect, it } from 'vitest';
import type { Telemetry } from '../../src/ingest/otlp/records.js';
import { eventName } from '../../src/ingest/otlp/sources/attributes.js';
import { createPool } from '../../src/store/pg/client.js';
import { breaksOf, turnsOf } from '../e2e/api.js';
import { request, startServer, type ServerProcess } from '../e2e/server.js';
import { replayLogs, replaySpans } from '../otlp/replay.js';
import { fixture } from '../otlp/sources/helpers.js';
import { freshDb } from '../store-under-test.js';

const HARNESSES = [
  {
    name: 'Gemini CLI',
    telemetry: fixture('gemini-cli/0.61.0-changes.json'),
    session: '5e7a9c1b-3d5f-4a7b-9c1d-2e4f6a8b0c2d',
    reasons: ['tools_schema_changed', 'system_changed', 'messages_rewritten'],
  },
  {
    name: 'Qwen Code',
    telemetry: fixture('qwen-code/0.24.4-changes.json'),
    session: '9c2e4a6b-8d0f-4b2c-a4e6-1f3b5d7e9a0c',
    reasons: ['messages_rewritten', 'tools_schema_changed', 'system_changed'],
  },
];

/** Each stored turn: its request, its prefix's content hash (system, tools, model), its message hashes. */
async function snapshots(db: string): Promise<unknown[]> {
  const sql = createPool(db, { max: 1, connectTimeout: 5 });
  try {
    return [
      ...(await sql`
        SELECT t.request_id, p.hash AS prefix, p.system_hash IS NOT NULL AS system, p.toolset_id IS NOT NULL AS tools,
               t.message_hashes IS NOT NULL AS messages
        FROM turns t LEFT JOIN prefixes p ON p.id = t.prefix_id ORDER BY t.request_id`),
    ].map((row) => ({ ...row }));
  } finally {
    await sql.end();
  }
}

async function waiting(db: string): Promise<number> {
  const sql = createPool(db, { max: 1, connectTimeout: 5 });
  try {
    return (await sql`SELECT id FROM waiting_halves`).length;
  } finally {
    await sql.end();
  }
}

async function sendLogs(node: ServerProcess, telemetry: Telemetry): Promise<number[]> {
  return (await replayLogs(new OTLPLogExporter({ url: `${node.url}/v1/logs` }), telemetry.logs)).map((r) => r.code);
}

async function sendSpans(node: ServerProcess, telemetry: Telemetry): Promise<number[]> {
  return (await replaySpans(new OTLPTraceExporter({ url: `${node.url}/v1/traces` }), telemetry.spans)).map((r) => r.code);
}

/** The turns and breaks of a session as a node serves them. */
async function seen(node: ServerProcess, session: string) {
  const turns = (await turnsOf(node.url, session)).map((t) => [t.requestId, t.state, t.break?.reason ?? null]);
  const breaks = (await breaksOf(node.url)).map((b) => [b.requestId, b.reason, b.reasons, b.changedToolNames, b.changedSystemBlocks, b.firstChangedMessageIndex]);
  return { turns, breaks };
}

/** One node given everything, on a database of its own: what a split must equal. */
async function oneNode(telemetry: Telemetry, session: string, reasons: string[]) {
  const alone = await freshDb('otlp-joins-one');
  const one = await startServer({ db: alone });
  expect([...(await sendLogs(one, telemetry)), ...(await sendSpans(one, telemetry))].every((code) => code === 0)).toBe(true);
  const expected = await seen(one, session);
  expect(expected.breaks.map((b) => b[1]).reverse()).toEqual(reasons);
  return { alone, expected };
}

describe.each(HARNESSES)('$name over OTLP, spans to one node and logs to another, on one PostgreSQL database', ({ telemetry, session, reasons }) => {
  it.each([
    ['the spans first', true],
    ['the logs first', false],
  ])('%s: every turn gets the snapshot one node gives it, and each break its reason', { timeout: 90_000 }, async (_, spansFirst) => {
    const { alone, expected } = await oneNode(telemetry, session, reasons);
    const db = await freshDb('otlp-span-joins');
    const [a, b] = await Promise.all([startServer({ db }), startServer({ db })]);
    const codes = spansFirst
      ? [...(await sendSpans(a, telemetry)), ...(await sendLogs(b, telemetry))]
      : [...(await sendLogs(b, telemetry)), ...(await sendSpans(a, telemetry))];
    expect(codes.every((code) => code === 0)).toBe(true);

    expect(await snapshots(db)).toEqual(await snapshots(alone));
    // Every main turn has its system and tools from the span and its messages from the logs.
    expect((await snapshots(db)).filter((t) => !(t as { system: boolean; tools: boolean; messages: boolean }).system)).toEqual([]);
    for (const node of [a, b]) expect(await seen(node, session)).toEqual(expected);
    // Nothing is left waiting: every span found its call.
    expect(await waiting(db)).toBe(0);
  });
});

describe.each(HARNESSES)('$name over OTLP, a call\'s two log records at two nodes, on one PostgreSQL database', ({ telemetry, session, reasons }) => {
  it('api_request records at one node, api_response records and spans at the other: every turn gets its messages, and each break its reason', { timeout: 90_000 }, async () => {
    const requests = { ...telemetry, logs: telemetry.logs.filter((record) => eventName(record).endsWith('.api_request')) };
    const rest = { ...telemetry, logs: telemetry.logs.filter((record) => !eventName(record).endsWith('.api_request')) };
    expect(requests.logs.length).toBeGreaterThan(2);

    const { alone, expected } = await oneNode(telemetry, session, reasons);
    const db = await freshDb('otlp-record-joins');
    const [a, b] = await Promise.all([startServer({ db }), startServer({ db })]);
    // In the order one log exporter sends them: each request record waits at one node, and the other node pairs its response with it.
    const codes = [...(await sendLogs(a, requests)), ...(await sendLogs(b, rest)), ...(await sendSpans(b, rest))];
    expect(codes.every((code) => code === 0)).toBe(true);

    expect(await snapshots(db)).toEqual(await snapshots(alone));
    expect((await snapshots(db)).filter((t) => !(t as { messages: boolean }).messages)).toEqual([]);
    for (const node of [a, b]) expect(await seen(node, session)).toEqual(expected);
    expect(await waiting(db)).toBe(0);
  });
});

describe('Gemini CLI spans whose calls have not come, on PostgreSQL', () => {
  it('wait within --max-waiting-bytes and an hour: the oldest go and are counted; those kept still join their calls', { timeout: 60_000 }, async () => {
    const { telemetry, session } = HARNESSES[0]!;
    const db = await freshDb('otlp-span-bound');
    const [a, b] = await Promise.all([startServer({ db, args: ['--max-waiting-bytes', '8KiB'] }), startServer({ db })]);
    const sentAt = Date.now();
    expect((await sendSpans(a, telemetry)).every((code) => code === 0)).toBe(true);

    const sql = createPool(db, { max: 1, connectTimeout: 5 });
    let kept: { bytes: number; expires: number }[];
    try {
      kept = (await sql<{ bytes: string; expires_ms: string }[]>`SELECT bytes, expires_ms FROM waiting_halves WHERE kind = 'span_prefixes'`).map((r) => ({
        bytes: Number(r.bytes),
        expires: Number(r.expires_ms),
      }));
    } finally {
      await sql.end();
    }
    // Some spans fit, not all seven: the rest were dropped, oldest first, and counted.
    expect(kept.length).toBeGreaterThan(0);
    expect(kept.length).toBeLessThan(telemetry.spans.length);
    expect(kept.reduce((sum, k) => sum + k.bytes, 0)).toBeLessThanOrEqual(8 * 1024);
    for (const k of kept) expect(k.expires - sentAt).toBeGreaterThanOrEqual(60 * 60_000 - 1_000);
    const metrics = (await request(a.url, '/metrics')).text;
    const evicted = /^cachebreak_waiting_evicted_total\{project="default",table="span_prefixes",reason="bytes"\} (\d+)$/m.exec(metrics);
    expect(Number(evicted?.[1])).toBe(telemetry.spans.length - kept.length);

    // The logs at the other node: the newest calls get their system and tools, the oldest only their messages.
    expect((await sendLogs(b, telemetry)).every((code) => code === 0)).toBe(true);
    const withSpan = (await snapshots(db)).map((t) => (t as { system: boolean }).system);
    expect(withSpan).toHaveLength(telemetry.spans.length);
    expect(withSpan.filter(Boolean)).toHaveLength(kept.length);
    expect((await turnsOf(b.url, session)).map((t) => t.state)).toHaveLength(telemetry.spans.length);
    // The calls whose span was dropped wait for it until their hour runs out.
    expect(await waiting(db)).toBe(telemetry.spans.length - kept.length);
  });
});
