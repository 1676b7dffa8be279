import { describe, expect, it } from 'vitest';
import type { Span } from '../../../src/ingest/otlp/records.js';
import { fixture, mapped, only, store, totalInput, turns, usageOf } from './helpers.js';

const telemetry = fixture('genai/semconv-1.41.json');
const spanNamed = (id: string) => telemetry.spans.find((s) => s.spanId === id)!;

describe('OTel GenAI semantic conventions', () => {
  it('maps chat spans, leaves out the agent span that sums them and spans without usage', () => {
    const result = mapped(only({ spans: telemetry.spans }));
    expect(result.rejected).toEqual([]);
    expect(result.ignored).toEqual({ aggregate: 1, no_usage: 1 });
    expect(result.events.map((e) => [e.type, e.requestId, e.type === 'usage' ? undefined : e.sessionId])).toEqual([
      ['turn', 'msg_01GenA1', 'conv-42'],
      ['turn', 'msg_01GenA2', 'conv-42'],
      ['turn', 'msg_01GenA3', 'conv-42'],
      ['turn', '5b8efff798038103d269b633813fc60c:a1b2c3d4e5f60004', 'conv-43'],
      ['turn', 'msg_01Trace1', 'tl-session-1'],
    ]);
  });

  it('reads gen_ai.usage.input_tokens as INCLUSIVE of the cache, with the old and new write names', () => {
    const events = mapped(telemetry).events;
    const second = usageOf(events, 'msg_01GenA2');
    expect(second).toEqual({ uncached: 200, read: 8000, write: 400, write1h: 0, output: 160, cacheReported: true, writeReported: true });
    expect(totalInput(second)).toBe(8600);
    expect(usageOf(events, 'msg_01GenA3')).toMatchObject({ uncached: 200, read: 0, write: 8700 });
    // OpenLLMetry/Traceloop names.
    expect(usageOf(events, 'msg_01Trace1')).toEqual({ uncached: 200, read: 2800, write: 0, write1h: 0, output: 40, cacheReported: true, writeReported: true });
  });

  it('hashes system instructions and tool definitions into the snapshot, whether JSON strings or structured', () => {
    const result = mapped(telemetry);
    const fromSpan = result.events.find((e) => e.requestId === 'msg_01GenA1' && e.type === 'turn');
    const fromEvent = result.events.filter((e) => e.requestId === 'msg_01GenA1')[1];
    expect(fromSpan).toMatchObject({ model: 'claude-haiku-4-5', provider: 'anthropic', tools: [{ name: 'lookup_order' }, { name: 'refund_order' }, { name: 'escalate_ticket' }] });
    if (fromSpan?.type !== 'turn' || fromEvent?.type !== 'turn') throw new Error('expected turns');
    expect(fromEvent.systemHash).toBe(fromSpan.systemHash);
    expect(fromEvent.tools).toEqual(fromSpan.tools);
    const plain = result.events.find((e) => e.sessionId === 'conv-43');
    expect(plain).not.toHaveProperty('systemHash');
    expect(plain).not.toHaveProperty('tools');
  });

  it('stores the details event of a call its span already gave as a duplicate, and names the re-ordered tools', async () => {
    const { store: s, counts } = await store(mapped(telemetry));
    expect(counts).toEqual({ accepted: 5, duplicates: 1 });
    expect((await turns(s, 'conv-42')).map((v) => v.state)).toEqual(['cold', 'hit', 'miss']);
    const breaks = (await s.breaks('default', {}, {}, { limit: 5 })).items;
    expect(breaks).toEqual([
      expect.objectContaining({
        requestId: 'msg_01GenA3',
        reason: 'tools_order_changed',
        changedToolNames: ['lookup_order', 'refund_order'],
        expectedCacheReadTokens: 8400,
      }),
    ]);
  });

  it('rejects a malformed tool definition with the attribute and index named', () => {
    const span: Span = structuredClone(spanNamed('a1b2c3d4e5f60001'));
    (span.attributes as Record<string, unknown>)['gen_ai.tool.definitions'] = JSON.stringify([{ name: 'ok' }, { description: 'no name' }]);
    expect(mapped(only({ spans: [span] })).rejected).toEqual([
      { record: 'spans[0] (genai)', error: 'gen_ai.tool.definitions[1].name: expected a string' },
    ]);
  });
});
