import { describe, expect, it } from 'vitest';
import { createMappingContext } from '../../../src/ingest/otlp/sources/index.js';
import { geminiAgent } from '../../../src/ingest/otlp/sources/gemini-cli.js';
import { fixture, judged, mapped, only, states, store, totalInput, turns, usageOf } from './helpers.js';

const SESSION = 'b2e4f6a8-1c3d-4e5f-8a9b-0c1d2e3f4a5b';
const telemetry = fixture('gemini-cli/0.61.0.json');

function requestIds(events: { type: string; requestId: string }[], type: string): string[] {
  return events.filter((e) => e.type === type).map((e) => e.requestId);
}

type Record = (typeof telemetry.logs)[number];
/** The details record logged with an api_response: the same session and event.timestamp, and a response's token count. */
function detailsOf(logs: readonly Record[], response: Record): Record {
  return logs.find(
    (r) =>
      r.attributes['event.name'] === 'gen_ai.client.inference.operation.details' &&
      r.attributes['event.timestamp'] === response.attributes['event.timestamp'] &&
      r.attributes['gen_ai.usage.input_tokens'] !== undefined,
  )!;
}

describe('Gemini CLI 0.61.0', () => {
  it('names each call by the response id of the details record logged with its api_response, whichever comes first', () => {
    const first = mapped(telemetry);
    const again = mapped(telemetry);
    expect(first.rejected).toEqual([]);
    // Turn 2's details records come before their api_response; the others after.
    expect(requestIds(first.events, 'usage')).toEqual(['router-1', 'main-1', 'router-2', 'main-2', 'router-3', 'main-3']);
    expect(requestIds(again.events, 'usage')).toEqual(requestIds(first.events, 'usage'));
    // user_prompt, model_routing and the request-side details records.
    expect(first.ignored).toEqual({ unused_event: 9 });
  });

  it('names a call by a derived id at once when its details record is in another export, and the later details record changes nothing', () => {
    const context = createMappingContext();
    const response = telemetry.logs.find((r) => r.attributes['event.name'] === 'gemini_cli.api_response')!;
    const alone = mapped(only({ logs: [response] }), context);
    expect(requestIds(alone.events, 'usage')).toEqual([expect.stringMatching(/^gemini_cli:[0-9a-f]{16}$/)]);
    const later = mapped(only({ logs: [detailsOf(telemetry.logs, response)] }), context);
    expect(later.events).toEqual([]);
    // One export's details records name nothing of the next: the same api_response again gets the same derived id.
    expect(requestIds(mapped(only({ logs: [response] }), context).events, 'usage')).toEqual(requestIds(alone.events, 'usage'));
  });

  it('keeps a derived request id, stable when sent again, when the details record names no response id', () => {
    const response = telemetry.logs.find((r) => r.attributes['event.name'] === 'gemini_cli.api_response')!;
    const details = detailsOf(telemetry.logs, response);
    const { 'gen_ai.response.id': _, ...attributes } = details.attributes;
    const ids = () => requestIds(mapped(only({ logs: [response, { ...details, attributes }] })).events, 'usage');
    expect(ids()).toEqual([expect.stringMatching(/^gemini_cli:[0-9a-f]{16}$/)]);
    expect(ids()).toEqual(ids());
  });

  it('reads input_token_count as INCLUSIVE of the cache, and bills thoughts as output', () => {
    const result = mapped(telemetry);
    const main = result.events.filter((e) => e.type === 'usage' && e.agentId === 'main');
    const usage = usageOf(result.events, main[1]!.requestId);
    expect(usage).toEqual({ uncached: 11200 - 9600, read: 9600, write: 0, write1h: 0, output: 380 + 250, cacheReported: true, writeReported: false });
    expect(totalInput(usage)).toBe(11200);
  });

  it('gives each call the snapshot of its llm_call span and api_request record, whichever comes first, across requests', () => {
    const context = createMappingContext();
    const half = Math.floor(telemetry.logs.length / 2);
    // Spans first, then the logs in two exports: every half waits for its partner.
    const parts = [only({ spans: telemetry.spans }), only({ logs: telemetry.logs.slice(0, half) }), only({ logs: telemetry.logs.slice(half) })];
    const events = parts.flatMap((part) => mapped(part, context).events);
    const usage = requestIds(events, 'usage');
    const snapshots = new Map(events.flatMap((e) => (e.type === 'snapshot' ? [[e.requestId, e] as const] : [])));
    expect([...snapshots.keys()].sort()).toEqual([...usage].sort());
    expect(
      usage.map((id) => {
        const s = snapshots.get(id)!;
        return [s.agentId, s.model, s.tools?.length, s.messageHashes?.length, typeof s.systemHash];
      }),
    ).toEqual([
      ['utility_router', 'gemini-2.5-flash-lite', 0, 1, 'string'],
      ['main', 'gemini-2.5-pro', 11, 1, 'string'],
      ['utility_router', 'gemini-2.5-flash-lite', 0, 1, 'string'],
      ['main', 'gemini-2.5-pro', 11, 3, 'string'],
      ['utility_router', 'gemini-2.5-flash-lite', 0, 1, 'string'],
      ['main', 'gemini-2.5-pro', 11, 5, 'string'],
    ]);
    // Nothing is left waiting.
    expect(context.requestHalves.size + context.responseHalves.size + context.spanPrefixes.size + context.spanCalls.size).toBe(0);
  });

  it('pairs a response with the request record of its stream that started when it did, not with an earlier one', () => {
    const mainRequests = telemetry.logs.filter((r) => r.attributes['event.name'] === 'gemini_cli.api_request' && r.attributes['role'] === 'main');
    const mainResponses = telemetry.logs.filter((r) => r.attributes['event.name'] === 'gemini_cli.api_response' && r.attributes['role'] === 'main');
    // The requests of turns 1 and 2 arrive before the response of turn 2: turn 2 must take its own (3 messages).
    const events = mapped(only({ logs: [mainRequests[0]!, mainRequests[1]!, mainResponses[1]!, detailsOf(telemetry.logs, mainResponses[1]!)] })).events;
    const snapshot = events.find((e) => e.type === 'snapshot');
    expect(snapshot?.type === 'snapshot' && snapshot.messageHashes?.length).toBe(3);
  });

  it('keeps utility_router out of the main stream, so the main thread break is seen and explained', async () => {
    const { store: s, counts } = await store(mapped(telemetry));
    // Per call: its usage, the snapshot of its request record, then that snapshot completed by its span.
    expect(counts).toEqual({ accepted: 18, duplicates: 0 });
    const views = await turns(s, SESSION);
    // Gemini caches automatically: each router prompt (1850..1950 tokens) is written, and what the one before left
    // is under the 2,000 tokens a miss needs, so each is cold, never a break (SPEC §4.1, §4.3).
    expect(views.filter((v) => v.agentId === 'utility_router').map((v) => v.state)).toEqual(['cold', 'cold', 'cold']);
    expect(views.filter((v) => v.agentId === 'main').map((v) => v.state)).toEqual(['cold', 'hit', 'miss']);
    const [record] = (await s.breaks('default', {}, {}, { limit: 10 })).items;
    expect(record).toMatchObject({
      agentId: 'main',
      reason: 'system_changed',
      reasons: ['system_changed'],
      changedSystemBlocks: [0],
      changedToolNames: [],
      firstChangedMessageIndex: null,
      previousCacheReadTokens: 9600,
      currentCacheReadTokens: 0,
    });
    expect(Object.keys(states(views))).toHaveLength(6);
  });

  it('sent twice, every event is a duplicate', async () => {
    const { counts } = await store(mapped(telemetry), mapped(telemetry));
    expect(counts).toEqual({ accepted: 18, duplicates: 18 });
  });

  it('ignores its spans other than llm_call, which repeat what its log records count', () => {
    const span = { ...telemetry.spans[0]!, name: 'tool_call', attributes: { 'gen_ai.usage.input_tokens': 9850, 'gen_ai.operation.name': 'tool_call' } };
    expect(mapped(only({ spans: [span] })).ignored).toEqual({ covered_by_logs: 1 });
  });

  it('names the stream by role, and a subagent run by the id in its prompt_id', () => {
    expect(geminiAgent('main', 'sess')).toBe('main');
    expect(geminiAgent(undefined, 'sess')).toBe('main');
    expect(geminiAgent('utility_router', 'sess')).toBe('utility_router');
    expect(geminiAgent('subagent', 'codebase_investigator-x9k2#3')).toBe('codebase_investigator-x9k2');
    expect(geminiAgent('subagent', 'sess')).toBe('subagent');
  });
});

describe('Gemini CLI 0.61.0 chat_compression', () => {
  const compression = fixture('gemini-cli/0.61.0-compression.json');
  const SESSION_C = 'c3d5e7f9-2a4b-4c6d-8e0f-1a2b3c4d5e6f';

  it('maps a compression to a snapshot in the session\'s compact stream; the summarisation calls keep their own stream', () => {
    const result = mapped(compression);
    expect(result.rejected).toEqual([]);
    expect(result.events.map((e) => [e.type, e.agentId])).toEqual([
      ['usage', 'main'],
      ['usage', 'main'],
      ['usage', 'utility_compressor'],
      ['usage', 'utility_compressor'],
      ['snapshot', 'compact'],
      ['usage', 'main'],
    ]);
    expect(result.events[4]).toEqual({
      type: 'snapshot',
      requestId: expect.stringMatching(/^gemini_cli:[0-9a-f]{16}$/),
      sessionId: SESSION_C,
      agentId: 'compact',
      ts: Date.parse('2026-11-30T10:02:51.200Z'),
      provider: 'gemini',
      model: 'gemini-2.5-pro',
    });
  });

  it('makes the first main call after it an expected miss; without it, that call is a break', () => {
    const events = mapped(compression).events;
    const main = events.filter((e) => e.agentId === 'main').map((e) => e.requestId);
    const states = judged(events);
    expect(main.map((id) => states[id])).toEqual(['cold', 'hit', 'expected']);
    expect(judged(events.filter((e) => e.agentId !== 'compact'))[main[2]!]).toBe('miss');
  });

  it('is no marker when the compression failed and the history was kept', () => {
    const logs = compression.logs.map((r) =>
      r.attributes['event.name'] === 'gemini_cli.chat_compression' ? { ...r, attributes: { ...r.attributes, tokens_after: 524800 } } : r,
    );
    const result = mapped(only({ logs }));
    expect(result.ignored).toEqual({ compression_not_applied: 1 });
    expect(result.events.filter((e) => e.agentId === 'compact')).toEqual([]);
  });
});

describe('Gemini CLI 0.61.0, a prefix change between turns', () => {
  const changes = fixture('gemini-cli/0.61.0-changes.json');
  const SESSION_X = '5e7a9c1b-3d5f-4a7b-9c1d-2e4f6a8b0c2d';

  async function breaksOf(telemetry: typeof changes) {
    const { store: s } = await store(mapped(telemetry));
    const views = await turns(s, SESSION_X);
    const { items } = await s.breaks('default', {}, {}, { limit: 10 });
    return { states: views.map((v) => v.state), breaks: [...items].reverse() };
  }

  it('names the added tool, the edited system instruction and the rewritten first message', async () => {
    const { states: seen, breaks } = await breaksOf(changes);
    expect(seen).toEqual(['cold', 'hit', 'miss', 'hit', 'miss', 'hit', 'miss']);
    expect(breaks.map((b) => [b.reason, b.reasons, b.changedToolNames, b.changedSystemBlocks, b.firstChangedMessageIndex])).toEqual([
      ['tools_schema_changed', ['tools_schema_changed'], ['mcp_tracker_search_issues'], null, null],
      ['system_changed', ['system_changed'], [], [0], null],
      ['messages_rewritten', ['messages_rewritten'], [], null, 0],
    ]);
    expect(breaks[0]!.toolChanges).toEqual({ added: ['mcp_tracker_search_issues'], removed: [], schemaChanged: [], moved: [] });
  });

  it('without its spans, only the history is known: the tool and system changes are unknown, the rewrite still named', async () => {
    const { breaks } = await breaksOf(only({ logs: changes.logs }));
    expect(breaks.map((b) => b.reason)).toEqual(['unknown', 'unknown', 'messages_rewritten']);
  });

  it('with prompt logging off (no request_text), the spans still name the tool and system changes; the rewrite is not seen', async () => {
    const logs = changes.logs.map((r) => {
      const { request_text: _, ...attributes } = r.attributes;
      return { ...r, attributes };
    });
    const { breaks } = await breaksOf(only({ logs, spans: changes.spans }));
    expect(breaks.map((b) => [b.reason, b.changedToolNames])).toEqual([
      ['tools_schema_changed', ['mcp_tracker_search_issues']],
      ['system_changed', []],
      // System and tools known unchanged, the messages unknown: SPEC §4.4 takes that for the provider's doing.
      ['likely_provider_ttl_or_eviction', []],
    ]);
  });

  it('keeps no prompt, message or tool text', async () => {
    const { store: s } = await store(mapped(changes));
    const stored = JSON.stringify(await s.breaks('default', {}, {}, { limit: 10 })) + JSON.stringify(await turns(s, SESSION_X));
    for (const secret of ['Which open issues', 'Search the issue tracker', 'British English', 'npm run lint', 'interactive CLI agent']) {
      expect(stored).not.toContain(secret);
    }
  });
});

describe('Gemini CLI 0.61.0 request records that get no response', () => {
  it('are kept four per stream, the newest: failed calls cannot pile up', () => {
    const telemetry = fixture('gemini-cli/0.61.0-changes.json');
    const request = telemetry.logs.find((r) => r.attributes['event.name'] === 'gemini_cli.api_request')!;
    const response = telemetry.logs.find((r) => r.attributes['event.name'] === 'gemini_cli.api_response')!;
    const t0 = Date.parse(request.attributes['event.timestamp'] as string);
    const at = (i: number) => new Date(t0 + i * 10_000).toISOString();
    // Ten requests ten seconds apart, none answered yet.
    const requests = Array.from({ length: 10 }, (_, i) => ({
      ...request,
      spanId: String(i).padStart(16, 'a'),
      attributes: { ...request.attributes, 'event.timestamp': at(i) },
    }));
    /** The response of the call that started with request i (500 ms long). */
    const details = detailsOf(telemetry.logs, response);
    const answer = (i: number) => {
      const ended = new Date(t0 + i * 10_000 + 500).toISOString();
      return [
        { ...response, attributes: { ...response.attributes, 'event.timestamp': ended, duration_ms: 500 } },
        { ...details, attributes: { ...details.attributes, 'event.timestamp': ended, 'gen_ai.response.id': `answer-${i}` } },
      ];
    };
    const context = createMappingContext();
    mapped(only({ logs: requests }), context);
    const snapshotsOf = (i: number) => mapped(only({ logs: answer(i) }), context).events.filter((e) => e.type === 'snapshot');
    expect(snapshotsOf(0)).toEqual([]);
    expect(snapshotsOf(5)).toEqual([]);
    expect(snapshotsOf(6)).toHaveLength(1);
    expect(snapshotsOf(9)).toHaveLength(1);
  });
});
