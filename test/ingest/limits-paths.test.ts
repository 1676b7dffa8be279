// The limits hold on every way in, also for what is read out of raw content:
// a tool name from raw toolDefinitions (an MCP server_label too), stored
// free-form JSON (diagnostics, params) by size and by depth, names from OTLP
// spans held to the configured --max-string, a metric's model label, a
// followed file's lines, and the lines of `cachebreak import`. Each is that event's (or record's, or line's)
// rejection; the rest of its request is stored.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS, MAX_DEPTH } from '../../src/ingest/limits.js';
import { cli } from '../cli/run.js';
import { T0 } from '../e2e/events.js';
import { tempDir } from '../helpers.js';
import { freshDb, storeUnderTest } from '../store-under-test.js';
import { startOtlpServer, type TestServer } from '../otlp/harness.js';
import { follow, turnStates, waitFor } from '../tail/harness.js';

const LONG = 'n'.repeat(300_000);
const TOO_LONG = `longer than ${DEFAULT_LIMITS.maxString} characters (--max-string)`;

const snapshot = (requestId: string, fields: Record<string, unknown> = {}) => ({
  type: 'snapshot',
  requestId,
  sessionId: 's',
  ts: T0,
  model: 'claude-sonnet-4-5',
  provider: 'anthropic',
  ...fields,
});
const usage = (requestId: string, fields: Record<string, unknown> = {}) => ({
  type: 'usage',
  requestId,
  sessionId: 's',
  ts: T0 + 1_000,
  uncachedInputTokens: 10,
  cacheReadInputTokens: 0,
  ...fields,
});

async function post(server: TestServer, path: string, body: string | object) {
  const response = await fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

async function requestIds(server: TestServer): Promise<string[]> {
  const response = await fetch(`${server.url}/v1/sessions/s/turns`);
  return response.status === 404 ? [] : ((await response.json()) as { turns: { requestId: string }[] }).turns.map((t) => t.requestId);
}

const attributes = (fields: Record<string, unknown>) =>
  Object.entries(fields).map(([key, value]) => ({
    key,
    value: typeof value === 'number' ? { intValue: String(value) } : typeof value === 'string' ? { stringValue: value } : { stringValue: JSON.stringify(value) },
  }));

describe('limits on every way in', () => {
  it('HTTP /v1/events: raw tool names, an MCP server_label, large or deep diagnostics and params are each one rejection', async () => {
    const server = await startOtlpServer();
    const events = [
      snapshot('long_tool', { toolDefinitions: [{ name: 'read_file', input_schema: {} }, { name: LONG, input_schema: {} }] }),
      snapshot('long_label', { toolDefinitions: [{ type: 'mcp', server_label: LONG, server_url: 'https://example.com' }] }),
      usage('big_diagnostics', { diagnostics: { cache_miss_reason: 'd'.repeat(100_000) } }),
      snapshot('big_params', { params: { speed: 'p'.repeat(20_000) } }),
      snapshot('good', { toolDefinitions: [{ type: 'mcp', server_label: 'github', server_url: 'https://example.com' }] }),
    ];
    // Written by hand: JSON.stringify itself cannot nest this deep.
    const deep = `${JSON.stringify(usage('deep_diagnostics', { diagnostics: 0 })).slice(0, -2)}${'{"x":'.repeat(1_200)}1${'}'.repeat(1_200)}}`;
    const body = `[${events.map((e) => JSON.stringify(e)).join(',')},${deep}]`;
    const reply = await post(server, '/v1/events', body);
    expect(reply).toEqual({
      status: 200,
      body: {
        accepted: 1,
        duplicates: 0,
        rejected: [
          { index: 0, field: 'tools[1]', error: `events[0].tools[1]: name or schemaHash ${TOO_LONG}` },
          { index: 1, field: 'tools[0]', error: `events[1].tools[0]: name or schemaHash ${TOO_LONG}` },
          { index: 2, field: 'diagnostics', error: `events[2].diagnostics: 100024 characters of JSON; the limit is 16384 (--max-json)` },
          { index: 3, field: 'params', error: `events[3].params: 20012 characters of JSON; the limit is 16384 (--max-json)` },
          { index: 5, field: 'diagnostics', error: `events[5].diagnostics: nested more than ${MAX_DEPTH} levels deep` },
        ],
      },
    });
    // The unrelated session of the same request still takes events.
    expect((await post(server, '/v1/events', [usage('good')])).body).toEqual({ accepted: 1, duplicates: 0, rejected: [] });
    expect(await requestIds(server)).toEqual(['good']);
  });

  it('HTTP /v1/events: a NUL byte in an id or the provider is that event\'s rejection, on both stores alike', async () => {
    const server = await startOtlpServer();
    const nul = 'contains a NUL byte (\\u0000), which no stored value holds; remove it';
    const reply = await post(server, '/v1/events', [
      snapshot('nul\0request'),
      snapshot('nul_session', { sessionId: 's\0' }),
      snapshot('nul_agent', { agentId: '\0' }),
      snapshot('nul_model', { model: 'claude-sonnet-4-5\0' }),
      snapshot('nul_provider', { provider: 'anthropic\0' }),
      snapshot('good'),
    ]);
    expect(reply).toEqual({
      status: 200,
      body: {
        accepted: 1,
        duplicates: 0,
        rejected: [
          { index: 0, field: 'requestId', error: `events[0].requestId: ${nul}` },
          { index: 1, field: 'sessionId', error: `events[1].sessionId: ${nul}` },
          { index: 2, field: 'agentId', error: `events[2].agentId: ${nul}` },
          { index: 3, field: 'model', error: `events[3].model: ${nul}` },
          { index: 4, field: 'provider', error: `events[4].provider: ${nul}` },
        ],
      },
    });
    expect(await requestIds(server)).toEqual(['good']);
  });

  it('OTLP/HTTP logs: raw tool definitions and diagnostics in native records are held to the same limits', async () => {
    const server = await startOtlpServer();
    const record = (fields: Record<string, unknown>) => ({ timeUnixNano: `${T0}000000`, eventName: `prompt_cache.${String(fields.type)}`, attributes: attributes({ ...fields, type: undefined }).filter((a) => a.key !== 'type') });
    const reply = await post(server, '/v1/logs', {
      resourceLogs: [
        {
          resource: {},
          scopeLogs: [
            {
              scope: {},
              logRecords: [
                record(snapshot('long_label', { toolDefinitions: [{ type: 'mcp', server_label: LONG }] })),
                record(usage('big_diagnostics', { diagnostics: { cache_miss_reason: 'd'.repeat(100_000) } })),
                record(snapshot('good')),
              ],
            },
          ],
        },
      ],
    });
    expect(reply).toEqual({
      status: 200,
      body: {
        partialSuccess: {
          rejectedLogRecords: '2',
          errorMessage:
            // Diagnostics are refused as they are read (they are reduced before they are stored), tools when the events are stored.
            '2 record(s) rejected: logs[1] (native): diagnostics: 100024 characters of JSON; the limit is 16384 (--max-json); ' +
            `logs[0] (native): tools[0]: name or schemaHash ${TOO_LONG}`,
        },
      },
    });
    expect(await requestIds(server)).toEqual(['good']);
  });

  it('OTLP/HTTP traces: names read from a GenAI span are held to the configured --max-string', async () => {
    const server = await startOtlpServer({ limits: { ...DEFAULT_LIMITS, maxString: 64 } });
    const span = (spanId: string, tool: string) => ({
      traceId: 'a'.repeat(32),
      spanId,
      name: 'chat claude-sonnet-4-5',
      startTimeUnixNano: `${T0}000000`,
      endTimeUnixNano: `${T0 + 1_000}000000`,
      attributes: attributes({
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'anthropic',
        'gen_ai.request.model': 'claude-sonnet-4-5',
        'gen_ai.conversation.id': 's',
        'gen_ai.usage.input_tokens': 100,
        'gen_ai.tool.definitions': [{ type: 'function', name: tool, parameters: {} }],
      }),
    });
    const reply = await post(server, '/v1/traces', {
      resourceSpans: [{ resource: {}, scopeSpans: [{ scope: {}, spans: [span('1'.repeat(16), 't'.repeat(80)), span('2'.repeat(16), 'read_file')] }] }],
    });
    expect(reply).toEqual({
      status: 200,
      body: { partialSuccess: { rejectedSpans: '1', errorMessage: '1 record(s) rejected: spans[0] (genai): tools[0]: name or schemaHash longer than 64 characters (--max-string)' } },
    });
    expect(await requestIds(server)).toEqual([`${'a'.repeat(32)}:${'2'.repeat(16)}`]);
  });

  it.each([
    ['over --max-string', LONG, `model ${TOO_LONG}`],
    ['with a NUL byte', 'claude\0', 'model contains a NUL byte (\\u0000), which no stored value holds; remove it'],
  ])('OTLP/HTTP metrics: a token point whose model label is %s is rejected', async (_, model, problem) => {
    const server = await startOtlpServer();
    const point = (model: string) => ({ startTimeUnixNano: `${T0}000000`, timeUnixNano: `${T0 + 60_000}000000`, asInt: '100', attributes: attributes({ type: 'input', model }) });
    const reply = await post(server, '/v1/metrics', {
      resourceMetrics: [
        {
          resource: { attributes: attributes({ 'service.name': 'claude-code' }) },
          scopeMetrics: [{ scope: {}, metrics: [{ name: 'claude_code.token.usage', sum: { aggregationTemporality: 1, isMonotonic: true, dataPoints: [point(model), point('claude-sonnet-4-5')] } }] }],
        },
      ],
    });
    expect(reply).toEqual({
      status: 200,
      body: { partialSuccess: { rejectedDataPoints: '1', errorMessage: `1 record(s) rejected: points[0] (metrics): claude_code.token.usage: ${problem}` } },
    });
  });

  it('cachebreak import: the line with an over-long raw tool name is named, the others are stored', async () => {
    const file = join(tempDir(), 'events.ndjson');
    writeFileSync(file, [snapshot('long_label', { toolDefinitions: [{ type: 'mcp', server_label: LONG }] }), snapshot('good')].map((e) => JSON.stringify(e)).join('\n') + '\n');
    const db = await freshDb('import');
    const result = await cli(['import', '--db', db, file]);
    expect(result.stdout).toContain('1 accepted, 0 duplicates, 1 rejected.');
    expect(result.stdout).toContain(`${file}:1: tools[0]: name or schemaHash ${TOO_LONG}`);
  });

  it('cachebreak tail: an event with an over-long raw tool name is not stored, with a notice that names the field; the others are', async () => {
    const file = join(tempDir(), 'events.ndjson');
    writeFileSync(file, [snapshot('long_label', { toolDefinitions: [{ type: 'mcp', server_label: LONG }] }), snapshot('good')].map((e) => JSON.stringify(e)).join('\n') + '\n');
    const store = await storeUnderTest();
    const following = await follow(store, [file], { fromStart: true, format: 'ndjson' });
    await waitFor('the good event', async () => ('good' in (await turnStates(store, ['s'])) ? true : undefined));
    await following.tailer.settled();
    expect(Object.keys(await turnStates(store, ['s']))).toEqual(['good']);
    expect(following.notices).toContain(`${file}: 1 event(s) not stored (tools[0])`);
    expect(following.tailer.totals()).toMatchObject({ accepted: 1, rejected: 1 });
  });
});
