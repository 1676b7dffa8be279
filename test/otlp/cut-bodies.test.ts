// Claude Code logs each raw request body (OTEL_LOG_RAW_API_BODIES=1) cut at
// its content limit, 61,440 characters by default, and a real session's
// request (the tool schemas alone are tens of KB) passes it. Such bodies,
// sent through the real OTel SDK and exporter to a running server, must still
// give a snapshot of what is whole before the cut: a tool changed before the
// cut is named, and the messages past the cut are never taken as rewritten.
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import type { LogRecord } from '../../src/ingest/otlp/records.js';
import { join } from 'node:path';
import { breaksOf, turnsOf } from '../e2e/api.js';
import { tempDir } from '../helpers.js';
import { logExporter, metric, startOtlpServer } from './harness.js';
import { replayLogs } from './replay.js';

const LIMIT = 61_440;
const MODEL = 'claude-sonnet-4-5-20250929';
const T0 = Date.parse('2026-12-01T09:00:00.000Z');

/** Deterministic filler text of a given length (no content of any real prompt). */
function filler(seed: string, length: number): string {
  let text = '';
  for (let i = 0; text.length < length; i++) text += `${seed} line ${i}: lorem ipsum dolor sit amet, consectetur adipiscing. `;
  return text.slice(0, length);
}

const BUILT_IN = ['Task', 'Bash', 'Glob', 'Grep', 'ExitPlanMode', 'Read', 'Edit', 'Write', 'NotebookEdit', 'WebFetch', 'TodoWrite', 'WebSearch', 'BashOutput', 'KillShell', 'SlashCommand'];
const MCP = Array.from({ length: 30 }, (_, i) => `mcp__server${i % 4}__tool_${i}`);

/** Claude Code's tools: long descriptions and JSON schemas, ~125 KB with the MCP tools, ~35 KB without. */
function tools(grepVersion = 1, withMcp = true): object[] {
  return [...BUILT_IN, ...(withMcp ? MCP : [])].map((name, i) => ({
    name,
    description: filler(name === 'Grep' ? `${name} v${grepVersion}` : name, name === 'Grep' ? 2_000 + grepVersion * 900 : 1_500 + (i % 5) * 400),
    input_schema: {
      type: 'object',
      properties: { path: { type: 'string', description: 'where' }, limit: { type: 'number' } },
      required: ['path'],
      additionalProperties: false,
      $schema: 'http://json-schema.org/draft-07/schema#',
    },
  }));
}

const SYSTEM = [
  { type: 'text', text: 'x-anthropic-billing-header: cc_version=2.1.332.e41; cc_entrypoint=sdk-cli;' },
  { type: 'text', text: "You are Claude Code, Anthropic's official CLI for Claude.", cache_control: { type: 'ephemeral', ttl: '1h' } },
  { type: 'text', text: filler('system', 9_000), cache_control: { type: 'ephemeral', ttl: '1h' } },
];

/** A conversation of `turns` user/assistant pairs, the newest user message marked for caching. */
function messages(turns: number, size: number): object[] {
  const list: object[] = [];
  for (let i = 0; i < turns; i++) {
    list.push({ role: 'user', content: [{ type: 'text', text: filler(`user ${i}`, size) }] });
    list.push({ role: 'assistant', content: [{ type: 'text', text: filler(`assistant ${i}`, size) }] });
  }
  list.push({ role: 'user', content: [{ type: 'text', text: filler(`user ${turns}`, size), cache_control: { type: 'ephemeral' } }] });
  return list;
}

/** The request as Claude Code builds it: model, messages, system, tools, then the settings. */
function claudeOrder(body: { messages: object[]; tools: object[] }): string {
  return JSON.stringify({
    model: MODEL,
    messages: body.messages,
    system: SYSTEM,
    tools: body.tools,
    betas: ['claude-code-20250219', 'interleaved-thinking-2025-05-14'],
    metadata: { user_id: 'user_5f0c2e_account_7a1d_session_cut' },
    max_tokens: 32_000,
    thinking: { type: 'enabled', budget_tokens: 31_999 },
    stream: true,
  });
}

/** The same request with the settings, system and tools first (the order other builds send). */
function settingsFirst(body: { messages: object[]; tools: object[] }): string {
  return JSON.stringify({
    model: MODEL,
    max_tokens: 32_000,
    stream: true,
    thinking: { type: 'enabled', budget_tokens: 31_999 },
    system: SYSTEM,
    tools: body.tools,
    messages: body.messages,
  });
}

const RESOURCE = { 'service.name': 'claude-code', 'service.version': '2.1.332' };
const SCOPE = { name: 'com.anthropic.claude_code.events', version: '2.1.332' };

function record(name: string, timeMs: number, attributes: Record<string, string | number>, sessionId: string): LogRecord {
  return {
    resource: RESOURCE,
    scope: SCOPE,
    timeMs,
    eventName: '',
    severityNumber: 9,
    body: `claude_code.${name}`,
    attributes: { 'session.id': sessionId, 'event.name': name, 'event.timestamp': new Date(timeMs).toISOString(), 'prompt.id': 'p-1', ...attributes },
    traceId: '',
    spanId: '',
  } as LogRecord;
}

interface Call {
  id: string;
  full: string;
  read: number;
  write: number;
  /** Sent whole (the limit raised) instead of cut. */
  whole?: boolean;
}

/** One call's three records, its request body cut where Claude Code cuts it. */
function callRecords(sessionId: string, call: Call, at: number): LogRecord[] {
  const bodyId = `rb-${call.id}`;
  const common = { model: MODEL, query_source: 'sdk' };
  return [
    record('api_request_body', at, { ...common, body: call.whole ? call.full : call.full.slice(0, LIMIT), body_length: call.full.length, request_body_id: bodyId }, sessionId),
    record('api_response_body', at + 4_000, { ...common, body: '{"type":"message"}', body_length: 18, request_body_id: bodyId, request_id: call.id }, sessionId),
    record(
      'api_request',
      at + 4_010,
      { ...common, input_tokens: 6, output_tokens: 200, cache_read_tokens: call.read, cache_creation_tokens: call.write, duration_ms: 4_000, ttft_ms: 900, request_id: call.id },
      sessionId,
    ),
  ];
}

function session(sessionId: string, calls: Call[], first = 0): LogRecord[] {
  return calls.flatMap((call, i) => callRecords(sessionId, call, T0 + (first + i) * 20_000));
}

describe('Claude Code request bodies cut at the content limit', () => {
  it('give partial snapshots: the real reason before the cut, no false rewrite past it, each cut counted', async () => {
    // Session 1, Claude Code's order: the cut falls inside the tools; Grep (4th tool) changes between B and C.
    const [a, b, c] = [claudeOrder({ messages: messages(0, 800), tools: tools() }), claudeOrder({ messages: messages(1, 800), tools: tools() }), claudeOrder({ messages: messages(2, 800), tools: tools(2) })];
    for (const full of [a, b, c]) {
      expect(full.length).toBeGreaterThan(LIMIT);
      expect(full.indexOf('"tools":')).toBeLessThan(LIMIT);
      expect(full.indexOf('"name":"Grep"')).toBeLessThan(LIMIT);
      expect(full.indexOf('"betas":')).toBeGreaterThan(LIMIT);
    }
    const inTools = session('cut-in-tools', [
      { id: 'req_tools_A', full: a, read: 0, write: 30_000 },
      { id: 'req_tools_B', full: b, read: 30_000, write: 600 },
      { id: 'req_tools_C', full: c, read: 0, write: 31_000 },
      { id: 'req_tools_D', full: c, read: 0, write: 31_000 },
    ]);
    // Session 2, settings first and a long conversation: the cut falls inside the messages. C's Grep grew,
    // which moves its cut to an earlier message than B's.
    const [b2, c2] = [
      settingsFirst({ messages: messages(10, 2_500), tools: tools(1, false) }),
      settingsFirst({ messages: messages(11, 2_500), tools: tools(3, false) }),
    ];
    for (const full of [b2, c2]) expect(full.indexOf('"messages":')).toBeLessThan(LIMIT);
    const inMessages = session('cut-in-messages', [
      { id: 'req_msgs_B', full: b2, read: 0, write: 60_000 },
      { id: 'req_msgs_C', full: c2, read: 0, write: 61_000 },
    ]);

    const file = join(tempDir(), 'cachebreak.db');
    const server = await startOtlpServer({ db: file });
    for (const result of await replayLogs(logExporter(server, 'http/protobuf'), [...inTools, ...inMessages])) expect(result).toEqual({ code: 0 });

    const states = async (id: string) => (await turnsOf(server.url, id)).map((t) => [t.requestId, t.state]);
    expect(await states('cut-in-tools')).toEqual([
      ['req_tools_A', 'cold'],
      ['req_tools_B', 'hit'],
      ['req_tools_C', 'miss'],
      ['req_tools_D', 'miss'],
    ]);
    const breaks = await breaksOf(server.url);
    const byId = Object.fromEntries(breaks.map((b) => [b.requestId, b]));
    expect(byId['req_tools_C']).toMatchObject({ reason: 'tools_schema_changed', reasons: ['tools_schema_changed'], changedToolNames: ['Grep'] });
    // Nothing changed before the cut, and what lies past it is unknown: no claim of eviction.
    expect(byId['req_tools_D']).toMatchObject({ reason: 'unknown', reasons: ['unknown'], changedToolNames: [] });
    expect(byId['req_msgs_C']).toMatchObject({ reason: 'tools_schema_changed', reasons: ['tools_schema_changed'], changedToolNames: ['Grep'], firstChangedMessageIndex: null });

    expect(await metric(server.url, 'cachebreak_bodies_truncated_total', { project: 'default' })).toBe(6);
    expect(await metric(server.url, 'cachebreak_events_total', { outcome: 'rejected' })).toBe(0);

    // The stored snapshots say where they were cut, so a restart or re-evaluation compares them alike.
    const db = new Database(file, { readonly: true });
    try {
      const stored = db
        .prepare('SELECT t.request_id AS id, p.partial FROM turns t JOIN prefixes p ON p.id = t.prefix_id ORDER BY t.request_id')
        .all() as { id: string; partial: string }[];
      expect(Object.fromEntries(stored.map((row) => [row.id, row.partial]))).toEqual({
        req_msgs_B: 'messages',
        req_msgs_C: 'messages',
        req_tools_A: 'tools',
        req_tools_B: 'tools',
        req_tools_C: 'tools',
        req_tools_D: 'tools',
      });
    } finally {
      db.close();
    }

    // After a restart the cut baseline is read back from the database as cut: the first whole body after
    // the limit is raised shows the tools past the old cut, which must not read as added.
    await server.close();
    const again = await startOtlpServer({ db: file });
    const whole = session('cut-in-tools', [{ id: 'req_tools_E', full: claudeOrder({ messages: messages(3, 800), tools: tools(2) }), read: 0, write: 32_000, whole: true }], 4);
    for (const result of await replayLogs(logExporter(again, 'http/protobuf'), whole)) expect(result).toEqual({ code: 0 });
    const e = (await breaksOf(again.url)).find((b) => b.requestId === 'req_tools_E');
    expect(e).toMatchObject({ previousRequestId: 'req_tools_D', reason: 'unknown', changedToolNames: [] });
    expect(await metric(again.url, 'cachebreak_bodies_truncated_total', { project: 'default' })).toBe(0);
  });
});
