import { describe, expect, it } from 'vitest';
import { mergeEvent } from '../../../src/core/join.js';
import type { CacheEvent } from '../../../src/core/types.js';
import type { LogRecord } from '../../../src/ingest/otlp/records.js';
import { qwenAgent } from '../../../src/ingest/otlp/sources/qwen-code.js';
import { fixture, judged, mapped, only, states, store, totalInput, turns, usageOf } from './helpers.js';

const SESSION = '7f3c9a2e-4b1d-4e8a-9c6f-2d5e8a1b3c4d';
const telemetry = fixture('qwen-code/0.24.4.json');

describe('Qwen Code 0.24.4', () => {
  it('maps each api_response to one call keyed by response_id, its api_request to the call\'s message hashes, and counts the rest as ignored', () => {
    const result = mapped(only({ logs: telemetry.logs }));
    expect(result.rejected).toEqual([]);
    expect(result.events.map((e) => [e.type, e.requestId, 'agentId' in e ? e.agentId : undefined])).toEqual([
      ['turn', 'chatcmpl-8a1f0c2e9b', 'main'],
      ['snapshot', 'chatcmpl-8a1f0c2e9b', 'main'],
      ['turn', 'chatcmpl-8a1f0c2ea0', 'main'],
      ['snapshot', 'chatcmpl-8a1f0c2ea0', 'main'],
      ['turn', 'chatcmpl-mem-51c0', 'managed-auto-memory-extractor-3fa9c1'],
      ['snapshot', 'chatcmpl-mem-51c0', 'managed-auto-memory-extractor-3fa9c1'],
      ['turn', 'chatcmpl-8a1f0c2eb7', 'main'],
      ['turn', 'chatcmpl-mem-77e2', 'managed-auto-memory-extractor-b70d42'],
      ['turn', 'chatcmpl-9b20d4e1c3', 'main'],
    ]);
    // The calls of turns 2 and 3 come without their api_request: they have no message hashes.
    const hashes = result.events.flatMap((e) => (e.type === 'snapshot' ? [e.messageHashes?.length] : []));
    expect(hashes).toEqual([1, 1, 1]);
    expect(result.ignored).toEqual({ unused_event: 4 });
  });

  it('reads input_token_count as INCLUSIVE of the cache: the read is not counted twice', () => {
    const usage = usageOf(mapped(telemetry).events, 'chatcmpl-8a1f0c2ea0');
    expect(usage).toEqual({ uncached: 14930 - 12288, read: 12288, write: 0, write1h: 0, output: 640, cacheReported: true, writeReported: false });
    expect(totalInput(usage)).toBe(14930);
  });

  it('starts the request at the response time minus duration_ms, on the provider Qwen Code resolves from auth_type', () => {
    const event = mapped(telemetry).events.find((e) => e.requestId === 'chatcmpl-8a1f0c2e9b')!;
    expect(event).toMatchObject({ ts: Date.parse('2026-11-30T10:00:00.010Z'), endTs: Date.parse('2026-11-30T10:00:04.210Z'), provider: 'openai', model: 'qwen3-coder-plus' });
  });

  it('reads ttft_ms as the time the call\'s cache entry became readable; a span that has none leaves it out', () => {
    const fromLogs = mapped(only({ logs: telemetry.logs })).events;
    expect(fromLogs.flatMap((e) => (e.type === 'snapshot' ? [] : [e.ttftMs]))).toEqual([900, 900, 900, 900, 900, 900]);
    const fromSpans = mapped(only({ spans: telemetry.spans })).events;
    expect(fromSpans.length).toBeGreaterThan(0);
    expect(fromSpans.map((e) => e.type !== 'snapshot' && e.ttftMs)).toEqual(fromSpans.map(() => undefined));
  });

  it('the same call from its llm_request span joins the same turn, whichever comes first', async () => {
    const fromSpans = mapped(only({ spans: telemetry.spans }));
    expect(fromSpans.rejected).toEqual([]);
    expect(fromSpans.events.map((e) => e.requestId)).toEqual(['chatcmpl-8a1f0c2e9b', 'chatcmpl-8a1f0c2ea0', 'chatcmpl-mem-51c0']);
    // The failed call has no usage; interaction and tool spans carry none.
    expect(fromSpans.ignored).toEqual({ no_usage: 3 });
    // Its subagent is the same run as the log record's, though only the span names it.
    expect(fromSpans.events[2]).toMatchObject({ agentId: 'managed-auto-memory-extractor-3fa9c1' });

    const fromLogs = mapped(only({ logs: telemetry.logs }));
    const outcomes = [];
    for (const order of [[fromSpans, fromLogs], [fromLogs, fromSpans]]) {
      const { store: s, counts } = await store(...order);
      // Each call's second record is either a repeat or a more complete version of the first
      // (6 calls from the logs, 3 of them with their api_request's message hashes, 3 from the spans).
      expect(counts.accepted + counts.duplicates).toBe(12);
      const views = await turns(s, SESSION);
      outcomes.push(views);
      expect(views).toHaveLength(6);
      const main = views.filter((v) => v.agentId === 'main');
      expect(main.map((v) => v.usage && v.usage.uncached + v.usage.read + v.usage.write)).toEqual([12480, 14930, 16200, 17100]);
    }
    expect(outcomes[0]).toEqual(outcomes[1]);
  });

  it('keeps the memory-extraction subagent in its own stream: no false break, and the real one is named', async () => {
    const { store: s } = await store(mapped(telemetry));
    const views = await turns(s, SESSION);
    expect(states(views)).toEqual({
      'chatcmpl-8a1f0c2e9b': 'cold',
      'chatcmpl-8a1f0c2ea0': 'hit',
      'chatcmpl-mem-51c0': 'cold',
      'chatcmpl-8a1f0c2eb7': 'hit',
      'chatcmpl-mem-77e2': 'cold',
      'chatcmpl-9b20d4e1c3': 'miss',
    });
    const breaks = await s.breaks('default', {}, {}, { limit: 10 });
    expect(breaks.items).toEqual([
      expect.objectContaining({ requestId: 'chatcmpl-9b20d4e1c3', previousRequestId: 'chatcmpl-8a1f0c2eb7', agentId: 'main', reason: 'model_changed' }),
    ]);
  });

  it('the memory subagent in the main stream would be a false break: the separation is what prevents it', async () => {
    const merged = mapped(telemetry).events.map((e) => (e.type === 'snapshot' || e.type === 'turn' ? { ...e, agentId: 'main' } : e));
    const { store: s } = await store({ events: merged, origins: [], tokenPoints: [], halves: [], ignored: {}, rejected: [] });
    const breaks = await s.breaks('default', {}, {}, { limit: 10 });
    expect(breaks.items.map((b) => b.requestId)).toContain('chatcmpl-mem-51c0');
  });

  it('reads the stream from prompt_id, else subagent_name, else main', () => {
    expect(qwenAgent(`${SESSION}########3`, undefined)).toBe('main');
    expect(qwenAgent(`${SESSION}#managed-auto-memory-extractor-3fa9c1#2`, '')).toBe('managed-auto-memory-extractor-3fa9c1');
    expect(qwenAgent('p-1', 'reviewer')).toBe('reviewer');
    expect(qwenAgent(undefined, undefined)).toBe('main');
  });

  it('rejects a negative count with the attribute named', () => {
    const record = structuredClone(telemetry.logs.find((r) => r.attributes['response_id'] === 'chatcmpl-8a1f0c2ea0')!);
    (record.attributes as Record<string, unknown>)['cached_content_token_count'] = -5;
    const result = mapped(only({ logs: [record] }));
    expect(result.events).toEqual([]);
    expect(result.rejected).toEqual([
      { record: 'logs[0] (qwen-code)', error: 'cached_content_token_count: expected a non-negative integer, got -5' },
    ]);
  });
});

describe('Qwen Code 0.24.4 chat_compression', () => {
  const compression = fixture('qwen-code/0.24.4-compression.json');
  const SESSION_C = 'a91c4e2f-3b7d-4c8e-9f1a-6d2b5e8c0f47';
  const AFTER = 'chatcmpl-5e0a71c3f4';
  const isCompression = (r: LogRecord) => r.attributes['event.name'] === 'qwen-code.chat_compression';
  const markers = (events: CacheEvent[]) => events.filter((e) => e.agentId === 'compact');

  it('maps a compression to a snapshot in the session\'s compact stream, at the record\'s time', () => {
    const result = mapped(compression);
    expect(result.rejected).toEqual([]);
    // The failed attempt (below); the api_request records give their calls message hashes.
    expect(result.ignored).toEqual({ compression_not_applied: 1 });
    const [marker, ...more] = markers(result.events);
    expect(more).toEqual([]);
    // The record names no model: the marker takes the session's, from its main calls.
    expect(marker).toEqual({ type: 'snapshot', requestId: expect.stringMatching(/^qwen-code:[0-9a-f]{16}$/), sessionId: SESSION_C, agentId: 'compact', ts: Date.parse('2026-11-30T10:01:00.000Z'), model: 'qwen3-coder-plus' });
  });

  it('makes the first main call after it an expected miss; without it, that call is a break', () => {
    const events = mapped(compression).events;
    expect(judged(events)).toEqual({ 'chatcmpl-5e0a71c3d2': 'cold', 'chatcmpl-5e0a71c3e8': 'hit', [AFTER]: 'expected', 'chatcmpl-5e0a71c40b': 'hit' });
    expect(judged(events.filter((e) => e.agentId !== 'compact'))[AFTER]).toBe('miss');
  });

  it('is no marker when the compression failed and the history was kept (tokens_after not below tokens_before)', () => {
    const logs = compression.logs.map((r) => (isCompression(r) ? { ...r, attributes: { ...r.attributes, tokens_after: r.attributes['tokens_before']! } } : r));
    const result = mapped(only({ logs }));
    expect(result.ignored).toMatchObject({ compression_not_applied: 2 });
    expect(markers(result.events)).toEqual([]);
    expect(judged(result.events)[AFTER]).toBe('miss');
  });

  it('keeps its request id whatever else arrived, and labels the model from the record, else "unknown"', () => {
    const record = compression.logs.find(isCompression)!;
    const [alone] = mapped(only({ logs: [record] })).events;
    const [withCalls] = markers(mapped(compression).events);
    expect(alone).toMatchObject({ requestId: withCalls!.requestId, agentId: 'compact', model: 'unknown' });
    const named = { ...record, attributes: { ...record.attributes, model: 'qwen3-coder-flash' } };
    expect(mapped(only({ logs: [named] })).events).toMatchObject([{ requestId: withCalls!.requestId, model: 'qwen3-coder-flash' }]);
  });
});

describe('Qwen Code 0.24.4, prefix changes between turns', () => {
  const changes = fixture('qwen-code/0.24.4-changes.json');
  const SESSION_X = '9c2e4a6b-8d0f-4b2c-a4e6-1f3b5d7e9a0c';

  async function seen(telemetry: typeof changes) {
    const { store: s } = await store(mapped(telemetry));
    const views = await turns(s, SESSION_X);
    const { items } = await s.breaks('default', {}, {}, { limit: 10 });
    return { states: views.map((v) => v.state), breaks: [...items].reverse() };
  }

  it('names the rewritten history, the MCP tool added and the QWEN.md edit', async () => {
    const { states: got, breaks } = await seen(changes);
    expect(got).toEqual(['cold', 'hit', 'miss', 'hit', 'miss', 'hit', 'miss', 'hit']);
    expect(breaks.map((b) => [b.reason, b.reasons, b.changedToolNames, b.firstChangedMessageIndex])).toEqual([
      // Each new turn drops the previous date reminder from an earlier user message.
      ['messages_rewritten', ['messages_rewritten'], [], 0],
      ['tools_schema_changed', ['tools_schema_changed', 'messages_rewritten'], ['(MCP tools)'], 4],
      ['system_changed', ['system_changed', 'messages_rewritten'], [], 8],
    ]);
  });

  it('from the spans alone, the tool and system changes are still named; the history is not known', async () => {
    const logs = changes.logs.filter((r) => r.attributes['event.name'] !== 'qwen-code.api_request');
    const { breaks } = await seen(only({ logs, spans: changes.spans }));
    expect(breaks.map((b) => [b.reason, b.changedToolNames])).toEqual([
      // System and tools known unchanged, the messages unknown: SPEC §4.4 takes that for the provider's doing.
      ['likely_provider_ttl_or_eviction', []],
      ['tools_schema_changed', ['(MCP tools)']],
      ['system_changed', []],
    ]);
  });

  it('without the spans, only the history is known', async () => {
    const { breaks } = await seen(only({ logs: changes.logs }));
    expect(breaks.map((b) => [b.reason, b.reasons])).toEqual([
      ['messages_rewritten', ['messages_rewritten']],
      ['messages_rewritten', ['messages_rewritten']],
      ['messages_rewritten', ['messages_rewritten']],
    ]);
  });

  it('does not use token estimates Qwen Code scaled down to the provider count (messages then count 0)', () => {
    const spans = changes.spans.map((span) => {
      const usage = JSON.parse(span.attributes['qwen-code.context.usage'] as string) as { breakdown: Record<string, number> };
      usage.breakdown['messages_tokens'] = 0;
      return { ...span, attributes: { ...span.attributes, 'qwen-code.context.usage': JSON.stringify(usage) } };
    });
    const snapshots = mapped(only({ logs: changes.logs, spans })).events.filter((e) => e.type === 'snapshot');
    expect(snapshots.length).toBeGreaterThan(0);
    for (const s of snapshots) expect(s.type === 'snapshot' && [s.systemHash, s.tools]).toEqual([undefined, undefined]);
  });

  it('keeps no prompt or message text', async () => {
    const { store: s } = await store(mapped(changes));
    const stored = JSON.stringify(await s.breaks('default', {}, {}, { limit: 10 })) + JSON.stringify(await turns(s, SESSION_X));
    for (const secret of ['retry budget', 'system-reminder', 'PaymentClient', 'QWEN.md rule']) expect(stored).not.toContain(secret);
  });
});

describe('Qwen Code 0.24.4 cache writes', () => {
  it('keeps the write the llm_request span reports, even 0, over the log record that has none, whichever comes first', () => {
    const logs = telemetry.logs.filter((r) => r.attributes['response_id'] === 'chatcmpl-8a1f0c2ea0');
    const span = telemetry.spans.find((s) => s.attributes['gen_ai.response.id'] === 'chatcmpl-8a1f0c2ea0')!;
    const fromLog = mapped(only({ logs })).events.find((e) => e.type === 'turn')!;
    for (const write of [0, 640]) {
      const withWrite = { ...span, attributes: { ...span.attributes, 'gen_ai.usage.cache_creation.input_tokens': write } };
      const fromSpan = mapped(only({ spans: [withWrite] })).events[0]!;
      for (const [first, second] of [[fromLog, fromSpan], [fromSpan, fromLog]] as const) {
        const { parts } = mergeEvent(mergeEvent(undefined, first).parts, second);
        expect(parts.usage?.usage).toMatchObject({ write, writeReported: true, read: 12288 });
      }
    }
  });
});
