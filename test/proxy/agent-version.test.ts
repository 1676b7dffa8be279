// The agent's version a harness's User-Agent names, exactly, or none.
import { describe, expect, it } from 'vitest';
import { agentVersionOf } from '../../src/ingest/proxy/agent-version.js';

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
});
