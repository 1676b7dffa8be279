// Golden scenarios fed the way harnesses really send them: raw request bodies
// through the snapshot builders and raw provider usage through normalisation.
import { describe, expect, it } from 'vitest';
import type { TurnEvent } from '../../src/core/types.js';
import { normalizeUsage } from '../../src/core/usage.js';
import { loadRequest, snapshotOf, type Body } from './request-fixtures.js';
import { evaluate, MINUTE, SECOND, T0 } from './scenario.js';

function usageOf(provider: string, raw: unknown) {
  const result = normalizeUsage(provider, raw);
  if (!result.ok) throw new Error(result.error);
  return result.usage;
}

function turnFrom(requestId: string, at: number, body: Body, provider: string, rawUsage: unknown): TurnEvent {
  return {
    type: 'turn',
    requestId,
    sessionId: 'sess_B',
    agentId: 'main',
    ts: T0 + at,
    endTs: T0 + at + 3 * SECOND,
    provider,
    ...snapshotOf(body),
    usage: usageOf(provider, rawUsage),
  };
}

describe('golden scenarios from raw bodies and raw usage', () => {
  it('ToolSearch reveal: a deferred tool that becomes visible is tools_schema_changed naming it', () => {
    const before = loadRequest('claude-code');
    before.tools.push({ name: 'mcp__linear__create_issue', description: 'Create an issue.', input_schema: { type: 'object' }, defer_loading: true });
    const after = structuredClone(before);
    delete after.tools.at(-1).defer_loading;
    after.messages.push({ role: 'assistant', content: 'Searching tools.' }, { role: 'user', content: 'Go on.' });
    const anthropic = (read: number, write: number) => ({ input_tokens: 30, cache_read_input_tokens: read, cache_creation_input_tokens: write, output_tokens: 90 });
    const result = evaluate([
      turnFrom('r1', 0, before, 'anthropic', anthropic(41_000, 900)),
      turnFrom('r2', 30 * SECOND, after, 'anthropic', anthropic(0, 42_300)),
    ]);
    expect(result.get('r2')!.break).toMatchObject({
      reason: 'tools_schema_changed',
      changedToolNames: ['mcp__linear__create_issue'],
      toolChanges: { added: ['mcp__linear__create_issue'], removed: [], schemaChanged: [], moved: [] },
    });
  });

  it('a Claude Code turn that only appends messages is a hit, not a rewrite', () => {
    const before = loadRequest('claude-code');
    const after = structuredClone(before);
    after.messages.push({ role: 'assistant', content: 'Done.' }, { role: 'user', content: 'Thanks.' });
    const result = evaluate([
      turnFrom('r1', 0, before, 'anthropic', { input_tokens: 30, cache_read_input_tokens: 0, cache_creation_input_tokens: 41_000, output_tokens: 9 }),
      turnFrom('r2', MINUTE, after, 'anthropic', { input_tokens: 30, cache_read_input_tokens: 41_000, cache_creation_input_tokens: 200, output_tokens: 9 }),
    ]);
    expect(result.get('r2')!.state).toBe('hit');
  });

  it('OpenAI stream with no write field: automatic caching, so a miss is measured against the whole previous prompt', () => {
    const body = loadRequest('openai-chat');
    const chat = (prompt: number, cached: number) => ({ prompt_tokens: prompt, completion_tokens: 80, prompt_tokens_details: { cached_tokens: cached } });
    const result = evaluate([
      turnFrom('o1', 0, body, 'openai', chat(50_000, 0)),
      turnFrom('o2', 20 * SECOND, body, 'openai', chat(50_200, 49_920)),
      turnFrom('o3', 40 * SECOND, body, 'openai', chat(50_400, 0)),
    ]);
    // The first turn read nothing: it wrote the whole prompt, automatically.
    expect([...result.values()].map((e) => e.state)).toEqual(['cold', 'hit', 'miss']);
    expect(result.get('o3')!.break).toMatchObject({
      reason: 'likely_provider_ttl_or_eviction',
      // 20 s against OpenAI's window: at least 5 min, up to the 24 h retention the request asked for.
      cause: 'likely_server_eviction',
      ttlMs: 5 * 60_000,
      ttlMaxMs: 24 * 60 * 60_000,
      ttlSource: 'declared',
      expectedCacheReadTokens: 50_200,
      missedCacheReadTokens: 50_200,
      cacheWriteTokens: 0,
    });
  });

  it('DeepSeek stream: hit and miss tokens only, no write field', () => {
    const body = loadRequest('openai-chat');
    const deepseek = (hit: number, miss: number) => ({ prompt_tokens: hit + miss, completion_tokens: 10, prompt_cache_hit_tokens: hit, prompt_cache_miss_tokens: miss });
    const result = evaluate([
      turnFrom('d1', 0, body, 'deepseek', deepseek(0, 30_000)),
      turnFrom('d2', 20 * SECOND, body, 'deepseek', deepseek(29_952, 300)),
      turnFrom('d3', 40 * SECOND, { ...body, model: 'deepseek-reasoner' }, 'deepseek', deepseek(0, 30_500)),
    ]);
    expect(result.get('d2')!.state).toBe('hit');
    // deepseek-reasoner has no baseline of its own family: it is compared with deepseek-chat's whole prompt.
    expect(result.get('d3')!.break).toMatchObject({ reason: 'model_changed', previousRequestId: 'd2', missedCacheReadTokens: 30_252 });
  });

  it('Gemini stream: a missing cachedContentTokenCount is a 0 read, so the miss is seen', () => {
    const body: Body = { ...loadRequest('gemini'), model: 'gemini-2.5-pro' };
    const gemini = (prompt: number, cached?: number) => ({
      usageMetadata: { promptTokenCount: prompt, candidatesTokenCount: 50, ...(cached === undefined ? {} : { cachedContentTokenCount: cached }) },
    });
    const edited = structuredClone(body);
    edited.systemInstruction.parts[0].text += ' Today is 2026-11-30.';
    const result = evaluate([
      turnFrom('g1', 0, body, 'gemini', gemini(40_000)),
      turnFrom('g2', 30 * SECOND, body, 'gemini', gemini(40_300, 39_000)),
      turnFrom('g3', 60 * SECOND, edited, 'gemini', gemini(40_600)),
    ]);
    expect(result.get('g1')!.state).toBe('cold');
    expect(result.get('g2')!.state).toBe('hit');
    expect(result.get('g3')!.break).toMatchObject({ reason: 'system_changed', changedSystemBlocks: [0] });
  });
});
