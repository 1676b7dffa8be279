// The provider's own diagnosis of a miss through the proxy: asked of
// Anthropic only when the user opts in (--provider-diagnostics adds the
// cache-diagnosis beta to anthropic-beta, merged with the client's, never
// twice, never when off), and read from Anthropic's and OpenAI's answers into
// the break's provider verdict and /v1/breaks/agreement.
import { describe, expect, it } from 'vitest';
import { breaksOf } from '../e2e/api.js';
import { send } from './client.js';
import { startProxyHarness, type ProxyHarness } from './harness.js';
import { anthropicAnswer, responsesAnswer, type Answer } from './upstreams.js';
import { waitFor } from './wait.js';

const BETA = 'cache-diagnosis-2026-04-07';
const anthropicBody = (tools: string[]) =>
  JSON.stringify({
    model: 'claude-sonnet-4-5',
    max_tokens: 50,
    system: 'Be brief.',
    tools: tools.map((name) => ({ name, description: `${name} a file`, input_schema: { type: 'object', properties: {} } })),
    messages: [{ role: 'user', content: 'hi' }],
  });
const responsesBody = (tools: string[]) =>
  JSON.stringify({ model: 'gpt-5.6', instructions: 'Be brief.', tools: tools.map((name) => ({ type: 'function', name, parameters: { type: 'object', properties: {} } })), input: 'hi' });

/** An answer whose JSON body carries `extra` beside what the mock puts there. */
function withFields(answer: Answer, extra: Record<string, unknown>): Answer {
  return { ...answer, chunks: [JSON.stringify({ ...(JSON.parse(String(answer.chunks[0])) as object), ...extra })] };
}

async function call(h: ProxyHarness, path: string, headers: Record<string, string>, body: string): Promise<void> {
  const answer = await send(h.proxy, 'POST', path, { 'content-type': 'application/json', ...headers }, body);
  expect(answer.status).toBe(200);
}

describe('provider diagnostics through the proxy', () => {
  it('adds the cache-diagnosis beta to Anthropic requests only when opted in, merged with the client betas, once', async () => {
    const off = await startProxyHarness();
    off.anthropic.usage = { input_tokens: 10 };
    await call(off, '/anthropic/v1/messages', { 'anthropic-beta': 'context-1m-2025-08-07' }, anthropicBody(['read']));
    await call(off, '/anthropic/v1/messages', {}, anthropicBody(['read']));
    expect(off.anthropic.received.map((r) => r.headers['anthropic-beta'])).toEqual(['context-1m-2025-08-07', undefined]);

    const on = await startProxyHarness({ providerDiagnostics: true });
    on.anthropic.usage = { input_tokens: 10 };
    on.openai.usage = { input_tokens: 10 };
    await call(on, '/anthropic/v1/messages', { 'anthropic-beta': 'context-1m-2025-08-07' }, anthropicBody(['read']));
    await call(on, '/anthropic/v1/messages', {}, anthropicBody(['read']));
    await call(on, '/anthropic/v1/messages', { 'anthropic-beta': `${BETA}, context-1m-2025-08-07` }, anthropicBody(['read']));
    await call(on, '/openai/v1/responses', { 'anthropic-beta': 'x' }, responsesBody(['read']));
    expect(on.anthropic.received.map((r) => r.headers['anthropic-beta'])).toEqual([`context-1m-2025-08-07,${BETA}`, BETA, `${BETA},context-1m-2025-08-07`]);
    // Other providers' requests go unchanged.
    expect(on.openai.received[0]!.headers['anthropic-beta']).toBe('x');
  });

  it("reads Anthropic's and OpenAI's miss reasons from their answers into the breaks and their agreement", async () => {
    const h = await startProxyHarness();
    const anthropicDiagnosis = { cache_miss_reason: { type: 'tools_changed', cache_missed_input_tokens: 5_000 } };
    const openaiDiagnosis = { type: 'cache_miss', reason: 'tools_changed', cache_missed_tokens: 5_000, comparison_reusable_tokens: 5_000 };
    let diagnose = false;
    h.anthropic.answer = (request) => {
      const answer = anthropicAnswer(request, h.anthropic.usage, `req_${h.anthropic.received.length}`);
      return diagnose ? withFields(answer, { diagnostics: anthropicDiagnosis }) : answer;
    };
    h.openai.answer = (request) => {
      const answer = responsesAnswer(request, h.openai.usage, `resp_${h.openai.received.length}`);
      return diagnose ? withFields(answer, { prompt_cache_diagnostics: openaiDiagnosis }) : answer;
    };
    // A first turn writes the prefix; the second adds a tool and reads nothing: a break, diagnosed by the provider.
    h.anthropic.usage = { input_tokens: 10, cache_creation_input_tokens: 5_000, cache_read_input_tokens: 0 };
    h.openai.usage = { input_tokens: 5_010, input_tokens_details: { cached_tokens: 0, cache_write_tokens: 5_000 } };
    await call(h, '/anthropic/v1/messages', { 'x-cachebreak-session': 'anthropic' }, anthropicBody(['read']));
    await call(h, '/openai/v1/responses', { 'x-cachebreak-session': 'openai' }, responsesBody(['read']));
    diagnose = true;
    h.anthropic.usage = { input_tokens: 10, cache_creation_input_tokens: 5_200, cache_read_input_tokens: 0 };
    h.openai.usage = { input_tokens: 5_210, input_tokens_details: { cached_tokens: 0, cache_write_tokens: 5_200 } };
    await call(h, '/anthropic/v1/messages', { 'x-cachebreak-session': 'anthropic' }, anthropicBody(['read', 'write']));
    await call(h, '/openai/v1/responses', { 'x-cachebreak-session': 'openai' }, responsesBody(['read', 'write']));

    const breaks = await waitFor('two breaks', () => breaksOf(h.server.url), (found) => found.length >= 2);
    const bySession = Object.fromEntries(breaks.map((b) => [b.sessionId, b]));
    expect(bySession['anthropic']).toMatchObject({ reason: 'tools_schema_changed', providerDiagnosis: { diagnostics: anthropicDiagnosis } });
    expect(bySession['openai']).toMatchObject({ reason: 'tools_schema_changed', providerDiagnosis: { prompt_cache_diagnostics: openaiDiagnosis } });
    const agreement = await h.get<{ provider: unknown; reasons: unknown[] }>('/v1/breaks/agreement');
    expect(agreement.provider).toEqual({ compared: 2, agreed: 2, rate: 1, alone: 0 });
    expect(agreement.reasons).toEqual([{ cachebreak: 'tools_changed', breaks: 2, harness: { compared: 0, agreed: 0, rate: null }, provider: { compared: 2, agreed: 2, rate: 1, alone: 0 } }]);
  });
});
