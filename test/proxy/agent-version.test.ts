// The agent's version a harness's User-Agent names, exactly, or none; and
// through a real proxy to a mock upstream, on the break of the calls it made.
import { describe, expect, it } from 'vitest';
import { agentVersionOf } from '../../src/ingest/proxy/agent-version.js';
import { send } from './client.js';
import { startProxyHarness } from './harness.js';
import { waitFor } from './wait.js';

describe('the agent version of a proxied call', () => {
  it('is read from the User-Agent of Claude Code, Gemini CLI and Qwen Code', () => {
    expect(agentVersionOf({ 'user-agent': 'claude-cli/2.1.332 (external, cli)' })).toBe('2.1.332');
    expect(agentVersionOf({ 'user-agent': 'GeminiCLI/0.61.0 (linux; x64)' })).toBe('0.61.0');
    expect(agentVersionOf({ 'user-agent': 'QwenCode/0.24.4 (linux; x64)' })).toBe('0.24.4');
    expect(agentVersionOf({ 'user-agent': 'GeminiCLI/0.62.0-nightly.20261201 (darwin; arm64)' })).toBe('0.62.0-nightly.20261201');
  });

  it('is none for any other User-Agent, or none at all', () => {
    for (const agent of ['Anthropic/JS 0.60.0', 'OpenAI/JS 5.1.0', 'curl/8.5.0', 'my-claude-cli/2.1.0', 'claude-cli/2.1', 'claude-cli/latest', 'GeminiCLI/0.61.0x']) {
      expect(agentVersionOf({ 'user-agent': agent })).toBeUndefined();
    }
    expect(agentVersionOf({})).toBeUndefined();
  });

  it('names the break of a proxied call with the version of the harness that made it', async () => {
    const h = await startProxyHarness();
    const call = (session: string, agent: string, system: string, usage: Record<string, number>) => {
      h.anthropic.usage = { input_tokens: 10, ...usage };
      const body = JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 50, system: [{ type: 'text', text: system }], messages: [{ role: 'user', content: 'hi' }] });
      return send(h.proxy, 'POST', '/anthropic/v1/messages', { 'x-cachebreak-session': session, 'x-cachebreak-agent': 'main', 'user-agent': agent }, body);
    };
    for (const [session, agent] of [['claude', 'claude-cli/2.1.332 (external, cli)'], ['sdk', 'Anthropic/JS 0.60.0']] as const) {
      await call(session, agent, 'You are a coding agent. v1', { cache_creation_input_tokens: 20_000, cache_read_input_tokens: 0 });
      await call(session, agent, 'You are a coding agent. v2', { cache_creation_input_tokens: 20_000, cache_read_input_tokens: 0 });
    }
    const read = () => h.get<{ breaks: { sessionId: string; agentVersion: string | null }[] }>('/v1/breaks').catch(() => ({ breaks: [] }));
    const { breaks } = await waitFor('two breaks', read, (body) => body.breaks.length >= 2);
    expect(Object.fromEntries(breaks.map((b) => [b.sessionId, b.agentVersion]))).toEqual({ claude: '2.1.332', sdk: null });
  });
});
