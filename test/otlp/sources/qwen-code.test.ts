import { describe, expect, it } from 'vitest';
import type { CacheEvent } from '../../../src/core/types.js';
import type { LogRecord } from '../../../src/ingest/otlp/records.js';
import { qwenAgent } from '../../../src/ingest/otlp/sources/qwen-code.js';
import { fixture, judged, mapped, only, states, store, totalInput, turns, usageOf } from './helpers.js';

const SESSION = '7f3c9a2e-4b1d-4e8a-9c6f-2d5e8a1b3c4d';
const telemetry = fixture('qwen-code/0.24.4.json');

describe('Qwen Code 0.24.4', () => {
  it('maps each api_response to one call keyed by response_id, and counts the rest as ignored', () => {
    const result = mapped(only({ logs: telemetry.logs }));
    expect(result.rejected).toEqual([]);
    expect(result.events.map((e) => [e.type, e.requestId, 'agentId' in e ? e.agentId : undefined])).toEqual([
      ['turn', 'chatcmpl-8a1f0c2e9b', 'main'],
      ['turn', 'chatcmpl-8a1f0c2ea0', 'main'],
      ['turn', 'chatcmpl-mem-51c0', 'memory-extractor-3fa9c1'],
      ['turn', 'chatcmpl-8a1f0c2eb7', 'main'],
      ['turn', 'chatcmpl-mem-77e2', 'memory-extractor-b70d42'],
      ['turn', 'chatcmpl-9b20d4e1c3', 'main'],
    ]);
    expect(result.ignored).toEqual({ unused_event: 7 });
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

  it('reads ttft_ms as the time the call\'s cache entry became readable; the span, which has none, leaves it out', () => {
    const fromLogs = mapped(only({ logs: telemetry.logs })).events;
    expect(fromLogs.map((e) => e.type !== 'snapshot' && e.ttftMs)).toEqual([900, 900, 900, 900, 900, 900]);
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
    expect(fromSpans.events[2]).toMatchObject({ agentId: 'memory-extractor-3fa9c1' });

    const fromLogs = mapped(only({ logs: telemetry.logs }));
    const outcomes = [];
    for (const order of [[fromSpans, fromLogs], [fromLogs, fromSpans]]) {
      const { store: s, counts } = await store(...order);
      // Each call's second record is either a repeat or a more complete version of the first.
      expect(counts.accepted + counts.duplicates).toBe(9);
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
    const { store: s } = await store({ events: merged, origins: [], tokenPoints: [], ignored: {}, rejected: [] });
    const breaks = await s.breaks('default', {}, {}, { limit: 10 });
    expect(breaks.items.map((b) => b.requestId)).toContain('chatcmpl-mem-51c0');
  });

  it('reads the stream from prompt_id, else subagent_name, else main', () => {
    expect(qwenAgent(`${SESSION}########3`, undefined)).toBe('main');
    expect(qwenAgent(`${SESSION}#memory-extractor-3fa9c1#2`, '')).toBe('memory-extractor-3fa9c1');
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
    // api_request records, and the failed attempt (below).
    expect(result.ignored).toEqual({ unused_event: 4, compression_not_applied: 1 });
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
