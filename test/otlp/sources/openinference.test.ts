import { describe, expect, it } from 'vitest';
import { fixture, mapped, store, totalInput, turns, usageOf } from './helpers.js';

const telemetry = fixture('openinference/openai-0.1.json');

describe('OpenInference', () => {
  it('maps LLM spans and leaves out the chain span that rolls their counts up', () => {
    const result = mapped(telemetry);
    expect(result.rejected).toEqual([]);
    expect(result.ignored).toEqual({ aggregate: 1 });
    expect(result.events.map((e) => e.requestId)).toEqual([
      '8d3a5c7e9f1b2d4f6a8c0e2a4c6e8a0b:c0ffee0000000001',
      '8d3a5c7e9f1b2d4f6a8c0e2a4c6e8a0b:c0ffee0000000002',
    ]);
    expect(result.events[0]).toMatchObject({ type: 'turn', sessionId: 'oi-session-9', provider: 'openai', model: 'gpt-4.1-2025-04-14', tools: [{ name: 'search_documents' }] });
  });

  it('reads llm.token_count.prompt as INCLUSIVE of the cache', () => {
    const usage = usageOf(mapped(telemetry).events, '8d3a5c7e9f1b2d4f6a8c0e2a4c6e8a0b:c0ffee0000000002');
    expect(usage).toEqual({ uncached: 6900 - 6144, read: 6144, write: 0, write1h: 0, output: 220, cacheReported: true, writeReported: false });
    expect(totalInput(usage)).toBe(6900);
  });

  it('hashes the system message, not the user messages: the same system gives the same hash', async () => {
    const [first, second] = mapped(telemetry).events;
    if (first?.type !== 'turn' || second?.type !== 'turn') throw new Error('expected turns');
    expect(first.systemHash).toBeDefined();
    expect(second.systemHash).toBe(first.systemHash);
    const { store: s } = await store(mapped(telemetry));
    expect((await turns(s, 'oi-session-9')).map((v) => v.state)).toEqual(['cold', 'hit']);
  });
});
