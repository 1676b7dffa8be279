// The source fixtures of test/otlp/sources/ — Qwen Code, Gemini CLI, Claude
// Code 2.1.88 and 2.1.332 (with the raw API bodies) and OTel GenAI spans —
// re-emitted through the real OpenTelemetry JS SDK and exporters to a running
// server, over HTTP (JSON and protobuf) and gRPC, with each fixture's own
// resource and scope. What the REST API then shows must be what the
// in-process mapping of the same records, request by request, stores: the
// wire (AnyValue encodings, string vs int counts, nulls, nanosecond times,
// trace ids, resource grouping) must change nothing. The key outcomes are
// also pinned literally, as the mapping tests state them, so that a mapping
// regression that both paths share still fails here.
import { describe, expect, it } from 'vitest';
import type { Telemetry } from '../../src/ingest/otlp/records.js';
import { createMappingContext } from '../../src/ingest/otlp/sources/index.js';
import { wireBreak, wireTurn } from '../../src/serve/rest/wire.js';
import { breaksOf, turnsOf, type WireTurn } from '../e2e/api.js';
import { logExporter, metric, startOtlpServer, traceExporter, type Transport } from './harness.js';
import { replayLogs, replaySpans } from './replay.js';
import { fixture, mapped, only, store, turns } from './sources/helpers.js';

const TRANSPORTS: readonly Transport[] = ['http/json', 'http/protobuf', 'grpc'];

interface Case {
  fixture: string;
  /** What the harness sends, one export after another: its log records, then its spans. */
  requests: (telemetry: Telemetry) => Telemetry[];
  /** Per session: [requestId (a RegExp for derived ids), agentId, state (null: no usage)], as the mapping tests expect. */
  turns: Record<string, [string | RegExp, string, string | null][]>;
  /** The break records, newest first, as far as the mapping tests pin them. */
  breaks: Record<string, unknown>[];
}

const logsThenSpans = (t: Telemetry) => [only({ logs: t.logs }), only({ spans: t.spans })].filter((r) => r.logs.length + r.spans.length > 0);
const GEMINI_ID = /^gemini_cli:[0-9a-f]{16}$/;
const CLAUDE_ID = /^claude_code:[0-9a-f]{16}$/;

const CASES: Record<string, Case> = {
  'Qwen Code 0.24.4 (api_response logs and llm_request spans)': {
    fixture: 'qwen-code/0.24.4.json',
    requests: logsThenSpans,
    turns: {
      '7f3c9a2e-4b1d-4e8a-9c6f-2d5e8a1b3c4d': [
        ['chatcmpl-8a1f0c2e9b', 'main', 'cold'],
        ['chatcmpl-8a1f0c2ea0', 'main', 'hit'],
        ['chatcmpl-mem-51c0', 'managed-auto-memory-extractor-3fa9c1', 'cold'],
        ['chatcmpl-8a1f0c2eb7', 'main', 'hit'],
        ['chatcmpl-mem-77e2', 'managed-auto-memory-extractor-b70d42', 'cold'],
        ['chatcmpl-9b20d4e1c3', 'main', 'miss'],
      ],
    },
    breaks: [{ requestId: 'chatcmpl-9b20d4e1c3', previousRequestId: 'chatcmpl-8a1f0c2eb7', agentId: 'main', reason: 'model_changed' }],
  },
  // The history rewritten at message 0 (the previous date reminder dropped), an MCP tool added, QWEN.md edited.
  'Qwen Code 0.24.4 prefix changes between turns': {
    fixture: 'qwen-code/0.24.4-changes.json',
    requests: logsThenSpans,
    turns: {
      '9c2e4a6b-8d0f-4b2c-a4e6-1f3b5d7e9a0c': ['cold', 'hit', 'miss', 'hit', 'miss', 'hit', 'miss', 'hit'].map((state) => [/^chatcmpl-[0-9a-f]{10}$/, 'main', state]),
    },
    breaks: [
      { reason: 'system_changed', reasons: ['system_changed', 'messages_rewritten'], changedToolNames: [] },
      { reason: 'tools_schema_changed', reasons: ['tools_schema_changed', 'messages_rewritten'], changedToolNames: ['(MCP tools)'] },
      { reason: 'messages_rewritten', reasons: ['messages_rewritten'], firstChangedMessageIndex: 0, changedToolNames: [] },
    ],
  },
  'Gemini CLI 0.61.0 (llm_call spans, api_request and api_response logs)': {
    fixture: 'gemini-cli/0.61.0.json',
    requests: logsThenSpans,
    turns: {
      'b2e4f6a8-1c3d-4e5f-8a9b-0c1d2e3f4a5b': [
        // Gemini caches implicitly: a router prompt above the minimum that read nothing was written.
        ['router-1', 'utility_router', 'cold'],
        ['main-1', 'main', 'cold'],
        ['router-2', 'utility_router', 'cold'],
        ['main-2', 'main', 'hit'],
        ['router-3', 'utility_router', 'cold'],
        ['main-3', 'main', 'miss'],
      ],
    },
    breaks: [{ agentId: 'main', reason: 'system_changed', changedSystemBlocks: [0], previousCacheReadTokens: 9600, currentCacheReadTokens: 0 }],
  },
  // A tool added, the system instruction edited (~/.gemini/GEMINI.md), the first message rebuilt (project GEMINI.md).
  'Gemini CLI 0.61.0 prefix changes between turns': {
    fixture: 'gemini-cli/0.61.0-changes.json',
    requests: logsThenSpans,
    turns: {
      '5e7a9c1b-3d5f-4a7b-9c1d-2e4f6a8b0c2d': ['cold', 'hit', 'miss', 'hit', 'miss', 'hit', 'miss'].map((state, i) => [`changes-${i + 1}`, 'main', state]),
    },
    breaks: [
      { reason: 'messages_rewritten', reasons: ['messages_rewritten'], firstChangedMessageIndex: 0, changedToolNames: [] },
      { reason: 'system_changed', reasons: ['system_changed'], changedSystemBlocks: [0], changedToolNames: [] },
      { reason: 'tools_schema_changed', reasons: ['tools_schema_changed'], changedToolNames: ['mcp_tracker_search_issues'] },
    ],
  },
  'Claude Code 2.1.88 (string counts)': {
    fixture: 'claude-code/2.1.88.json',
    requests: logsThenSpans,
    turns: {
      '3d9e1f20-7a4b-4c5d-9e8f-a1b2c3d4e5f6': [
        [CLAUDE_ID, 'main', 'cold'],
        [CLAUDE_ID, 'main', 'hit'],
        [CLAUDE_ID, 'main', 'miss'],
      ],
    },
    breaks: [{ reason: 'unknown', cause: 'ttl_expired', missedCacheReadTokens: 18250 + 512 }],
  },
  'Claude Code 2.1.332 (integer counts, api_request_body / api_response_body)': {
    fixture: 'claude-code/2.1.332.json',
    requests: logsThenSpans,
    turns: {
      'e8a1c3f5-2b4d-4f6a-8c0e-1a3c5e7a9b1d': [
        ['req_011CUaA1xZ', 'main', 'cold'],
        ['req_011CUaB2yQ', 'general-purpose#a7f3e2c', 'cold'],
        ['req_011CUaC3zR', 'main', 'hit'],
        ['req_011CUaD4wS', 'main', 'miss'],
      ],
    },
    breaks: [
      {
        requestId: 'req_011CUaD4wS',
        previousRequestId: 'req_011CUaC3zR',
        reason: 'tools_order_changed',
        changedToolNames: ['mcp__filesystem__read_tree', 'mcp__github__search_issues'],
      },
    ],
  },
  // A tool denied between calls, a CLAUDE.md edit (no break: it comes in the newest message), an old tool result cleared.
  'Claude Code 2.1.332 prefix changes between calls (raw bodies)': {
    fixture: 'claude-code/2.1.332-changes.json',
    requests: logsThenSpans,
    turns: {
      'b7d9f1a3-5c6e-4a8b-9d0f-2e4c6a8b0d1f': [
        ['req_011CWb0Zq0', 'main', 'cold'],
        ['req_011CWb1Zq1', 'main', 'hit'],
        ['req_011CWb2Zq2', 'main', 'miss'],
        ['req_011CWb3Zq3', 'main', 'hit'],
        ['req_011CWb4Zq4', 'main', 'hit'],
        ['req_011CWb5Zq5', 'main', 'miss'],
      ],
    },
    breaks: [
      { requestId: 'req_011CWb5Zq5', reason: 'messages_rewritten', reasons: ['messages_rewritten'], firstChangedMessageIndex: 2, changedToolNames: [] },
      { requestId: 'req_011CWb2Zq2', reason: 'tools_schema_changed', reasons: ['tools_schema_changed'], changedToolNames: ['Bash'] },
    ],
  },
  // SPEC §4.9: a compaction lives in the session's compact stream, and makes the next main-stream turn expected.
  'Claude Code 2.1.332 compaction (query_source compact)': {
    fixture: 'claude-code/2.1.332-compaction.json',
    requests: logsThenSpans,
    turns: {
      '4d7e2a90-6c1b-4f3e-9a8d-5b2c7e1f0a36': [
        ['req_011CUcA1mN', 'main', 'cold'],
        ['req_011CUcB2nP', 'main', 'hit'],
        ['req_011CUcC3pQ', 'compact', 'hit'],
        ['req_011CUcD4qR', 'main', 'expected'],
      ],
    },
    breaks: [],
  },
  'Qwen Code 0.24.4 chat_compression': {
    fixture: 'qwen-code/0.24.4-compression.json',
    requests: logsThenSpans,
    turns: {
      'a91c4e2f-3b7d-4c8e-9f1a-6d2b5e8c0f47': [
        ['chatcmpl-5e0a71c3d2', 'main', 'cold'],
        ['chatcmpl-5e0a71c3e8', 'main', 'hit'],
        // The compaction marker: a snapshot with no usage, so no state.
        [/^qwen-code:[0-9a-f]{16}$/, 'compact', null],
        ['chatcmpl-5e0a71c3f4', 'main', 'expected'],
        ['chatcmpl-5e0a71c40b', 'main', 'hit'],
      ],
    },
    breaks: [],
  },
  'Gemini CLI 0.61.0 chat_compression': {
    fixture: 'gemini-cli/0.61.0-compression.json',
    requests: logsThenSpans,
    turns: {
      'c3d5e7f9-2a4b-4c6d-8e0f-1a2b3c4d5e6f': [
        ['compression-1', 'main', 'cold'],
        ['compression-2', 'main', 'hit'],
        ['compression-3', 'utility_compressor', 'cold'],
        ['compression-4', 'utility_compressor', 'hit'],
        [GEMINI_ID, 'compact', null],
        ['compression-5', 'main', 'expected'],
      ],
    },
    breaks: [],
  },
  'OTel GenAI semantic conventions (chat spans and a details event)': {
    fixture: 'genai/semconv-1.41.json',
    requests: logsThenSpans,
    turns: {
      'conv-42': [
        ['msg_01GenA1', 'main', 'cold'],
        ['msg_01GenA2', 'main', 'hit'],
        ['msg_01GenA3', 'main', 'miss'],
      ],
      // The request id of a call with no response id is its trace and span id: the SDK must carry them.
      'conv-43': [['5b8efff798038103d269b633813fc60c:a1b2c3d4e5f60004', 'main', 'cold']],
    },
    breaks: [{ requestId: 'msg_01GenA3', reason: 'tools_order_changed', changedToolNames: ['lookup_order', 'refund_order'], expectedCacheReadTokens: 8400 }],
  },
};

/** What the in-process mapping stores for the same requests, in the REST API's wire shapes. */
async function inProcess(requests: Telemetry[], sessions: string[]) {
  const context = createMappingContext();
  const results = requests.map((request) => mapped(request, context));
  for (const result of results) expect(result.rejected).toEqual([]);
  const { store: s, counts } = await store(...results);
  const byId: Record<string, unknown[]> = {};
  for (const id of sessions) byId[id] = (await turns(s, id)).map(wireTurn);
  const breaks = (await s.breaks('default', {}, {}, { limit: 1000 })).items.map(wireBreak);
  return { turns: JSON.parse(JSON.stringify(byId)) as unknown, breaks: JSON.parse(JSON.stringify(breaks)) as unknown, counts };
}

describe('source fixtures through the real OTel SDK and exporters', () => {
  it.each(Object.entries(CASES))('%s: the same turns and breaks as the in-process mapping, over HTTP and gRPC', async (_, c) => {
    const requests = c.requests(fixture(c.fixture));
    const sessions = Object.keys(c.turns);
    const expected = await inProcess(requests, sessions);

    await Promise.all(
      TRANSPORTS.map(async (transport) => {
        const server = await startOtlpServer();
        for (const request of requests) {
          // One export per resource; every one must succeed.
          if (request.logs.length > 0) {
            for (const result of await replayLogs(logExporter(server, transport), request.logs)) expect(result, transport).toEqual({ code: 0 });
          }
          if (request.spans.length > 0) {
            for (const result of await replaySpans(traceExporter(server, transport), request.spans)) expect(result, transport).toEqual({ code: 0 });
          }
        }
        const got: Record<string, WireTurn[]> = {};
        for (const id of sessions) got[id] = await turnsOf(server.url, id);
        const breaks = await breaksOf(server.url);

        for (const [id, rows] of Object.entries(c.turns)) {
          expect(got[id]!.map((t) => [t.requestId, t.agentId, t.state]), `${transport}: ${id}`).toEqual(
            rows.map(([requestId, agentId, state]) => [typeof requestId === 'string' ? requestId : expect.stringMatching(requestId), agentId, state]),
          );
        }
        expect(breaks, transport).toEqual(c.breaks.map((b) => expect.objectContaining(b)));
        expect(got, transport).toEqual(expected.turns);
        expect(breaks, transport).toEqual(expected.breaks);

        const receiver = transport.startsWith('grpc') ? 'otlp_grpc' : 'otlp_http';
        const count = (outcome: string) => metric(server.url, 'cachebreak_events_total', { receiver, outcome });
        expect({ accepted: await count('accepted'), duplicates: await count('duplicate'), rejected: await count('rejected') }, transport).toEqual({
          ...expected.counts,
          rejected: 0,
        });
      }),
    );
  });
});
