import { describe, expect, it } from 'vitest';
import { createMappingContext } from '../../../src/ingest/otlp/sources/index.js';
import { geminiAgent } from '../../../src/ingest/otlp/sources/gemini-cli.js';
import { fixture, judged, mapped, only, states, store, totalInput, turns, usageOf } from './helpers.js';

const SESSION = 'b2e4f6a8-1c3d-4e5f-8a9b-0c1d2e3f4a5b';
const telemetry = fixture('gemini-cli/0.61.0.json');

function requestIds(events: { type: string; requestId: string }[], type: string): string[] {
  return events.filter((e) => e.type === type).map((e) => e.requestId);
}

describe('Gemini CLI 0.61.0', () => {
  it('gives each api_response a derived request id, stable when the record is sent again', () => {
    const first = mapped(telemetry);
    const again = mapped(telemetry);
    expect(first.rejected).toEqual([]);
    const ids = requestIds(first.events, 'usage');
    expect(ids).toHaveLength(6);
    expect(new Set(ids).size).toBe(6);
    for (const id of ids) expect(id).toMatch(/^gemini_cli:[0-9a-f]{16}$/);
    expect(requestIds(again.events, 'usage')).toEqual(ids);
    // user_prompt, api_request, model_routing and the request-side details records.
    expect(first.ignored).toEqual({ unused_event: 15 });
  });

  it('reads input_token_count as INCLUSIVE of the cache, and bills thoughts as output', () => {
    const result = mapped(telemetry);
    const main = result.events.filter((e) => e.type === 'usage' && e.agentId === 'main');
    const usage = usageOf(result.events, main[1]!.requestId);
    expect(usage).toEqual({ uncached: 11200 - 9600, read: 9600, write: 0, write1h: 0, output: 380 + 250, cacheReported: true, writeReported: false });
    expect(totalInput(usage)).toBe(11200);
  });

  it('gives each call the snapshot of its details record, whichever comes first, across requests', () => {
    const context = createMappingContext();
    const half = Math.floor(telemetry.logs.length / 2);
    const a = mapped(only({ logs: telemetry.logs.slice(0, half) }), context);
    const b = mapped(only({ logs: telemetry.logs.slice(half) }), context);
    const events = [...a.events, ...b.events];
    const usage = requestIds(events, 'usage');
    expect(requestIds(events, 'snapshot').sort()).toEqual([...usage].sort());
    const snapshots = events.filter((e) => e.type === 'snapshot');
    expect(snapshots.map((e) => e.type === 'snapshot' && [e.agentId, e.model])).toEqual([
      ['utility_router', 'gemini-2.5-flash-lite'],
      ['main', 'gemini-2.5-pro'],
      ['utility_router', 'gemini-2.5-flash-lite'],
      ['main', 'gemini-2.5-pro'],
      ['utility_router', 'gemini-2.5-flash-lite'],
      ['main', 'gemini-2.5-pro'],
    ]);
    // Nothing is left waiting.
    expect(context.geminiCalls.size + context.geminiPrefixes.size).toBe(0);
  });

  it('keeps utility_router out of the main stream, so the main thread break is seen and explained', async () => {
    const { store: s, counts } = await store(mapped(telemetry));
    expect(counts).toEqual({ accepted: 12, duplicates: 0 });
    const views = await turns(s, SESSION);
    // Gemini caches automatically: each router prompt (1850..1950 tokens) is written, and what the one before left
    // is under the 2,000 tokens a miss needs, so each is cold, never a break (SPEC §4.1, §4.3).
    expect(views.filter((v) => v.agentId === 'utility_router').map((v) => v.state)).toEqual(['cold', 'cold', 'cold']);
    expect(views.filter((v) => v.agentId === 'main').map((v) => v.state)).toEqual(['cold', 'hit', 'miss']);
    const [record] = (await s.breaks('default', {}, {}, { limit: 10 })).items;
    expect(record).toMatchObject({ agentId: 'main', reason: 'system_changed', changedSystemBlocks: [0], previousCacheReadTokens: 9600, currentCacheReadTokens: 0 });
    expect(Object.keys(states(views))).toHaveLength(6);
  });

  it('sent twice, every event is a duplicate', async () => {
    const { counts } = await store(mapped(telemetry), mapped(telemetry));
    expect(counts).toEqual({ accepted: 12, duplicates: 12 });
  });

  it('ignores its spans, which repeat what its log records count', () => {
    const span = {
      resource: telemetry.logs[0]!.resource,
      scope: telemetry.logs[0]!.scope,
      name: 'llm_call',
      traceId: 'aa'.repeat(16),
      spanId: 'bb'.repeat(8),
      startMs: 0,
      endMs: 1,
      attributes: { 'gen_ai.usage.input_tokens': 9850, 'gen_ai.operation.name': 'generate_content' },
      events: [],
    };
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
