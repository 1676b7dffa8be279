import { describe, expect, it } from 'vitest';
import { fixture, mapped, store, totalInput, turns, usageOf } from './helpers.js';

const v6 = fixture('vercel-ai/ai-6.json');
const v5 = fixture('vercel-ai/ai-5.json');

describe('Vercel AI SDK', () => {
  it('maps only the doGenerate spans: ai.generateText sums its steps', () => {
    const result = mapped(v6);
    expect(result.rejected).toEqual([]);
    expect(result.ignored).toEqual({ aggregate: 1, no_usage: 1 });
    expect(result.events.map((e) => [e.requestId, e.sessionId, e.agentId])).toEqual([
      ['msg_01VercelA', 'chat-5521', 'notes-chat'],
      ['msg_01VercelB', 'chat-5521', 'notes-chat'],
    ]);
    expect(result.events[0]).toMatchObject({ provider: 'anthropic', model: 'claude-sonnet-4-5', tools: [{ name: 'searchNotes' }, { name: 'createNote' }] });
  });

  it('v6: inputTokens INCLUDES the cache, split in inputTokenDetails', () => {
    const usage = usageOf(mapped(v6).events, 'msg_01VercelB');
    expect(usage).toEqual({ uncached: 110, read: 10380, write: 410, write1h: 0, output: 220, cacheReported: true, writeReported: true });
    expect(totalInput(usage)).toBe(10900);
  });

  it('v5: the Anthropic count EXCLUDES the cache (write from the provider metadata); the OpenAI count includes it', () => {
    const events = mapped(v5).events;
    const anthropic = usageOf(events, 'msg_01VercelV5');
    expect(anthropic).toEqual({ uncached: 25, read: 9000, write: 300, write1h: 0, output: 300, cacheReported: true, writeReported: true });
    expect(totalInput(anthropic)).toBe(9325);
    const openai = usageOf(events, 'resp_68a1f0');
    expect(openai).toEqual({ uncached: 480, read: 11520, write: 0, write1h: 0, output: 180, cacheReported: true, writeReported: false });
    expect(totalInput(openai)).toBe(12000);
  });

  it('the system message hash ignores its cache marker (providerOptions), so the second step hits', async () => {
    const [first, second] = mapped(v6).events;
    if (first?.type !== 'turn' || second?.type !== 'turn') throw new Error('expected turns');
    expect(second.systemHash).toBe(first.systemHash);
    const { store: s } = await store(mapped(v6));
    expect((await turns(s, 'chat-5521')).map((v) => v.state)).toEqual(['cold', 'hit']);
  });
});
