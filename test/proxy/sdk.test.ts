// Real SDK clients (@anthropic-ai/sdk, openai, @google/genai) through
// `cachebreak proxy` to mock upstreams that speak each API: every call is
// answered as the upstream answered it, a tool added between two turns is
// stored as a break with its real reason, and nothing of the headers,
// credentials or content reaches the database.
import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import { existsSync, readFileSync } from 'node:fs';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { startProxyHarness, type ProxyHarness } from './harness.js';
import { pause, waitFor } from './wait.js';

interface Break {
  requestId: string;
  previousRequestId: string;
  sessionId: string;
  agentId: string;
  provider: string;
  reason: string;
  changedToolNames: string[];
  missedCacheReadTokens: number;
}

const SECRETS = {
  anthropicKey: 'sk-ant-api03-SECRETKEYVALUE0000',
  openaiKey: 'sk-proj-SECRETKEYVALUE1111',
  geminiKey: 'AIzaSECRETKEYVALUE2222',
  system: 'SYSTEM-PROMPT-SECRET: you are a careful agent',
  user: 'USER-MESSAGE-SECRET: list the files',
  description: 'TOOL-DESCRIPTION-SECRET reads a file',
};

interface ToolDef {
  name: string;
  description: string;
  input_schema: { type: 'object'; properties: Record<string, unknown>; required?: string[] };
}
const readFile: ToolDef = { name: 'read_file', description: SECRETS.description, input_schema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } };
const shell: ToolDef = { name: 'shell', description: 'runs a command', input_schema: { type: 'object', properties: { command: { type: 'string' } } } };

async function breaksOf(h: ProxyHarness, count: number): Promise<Break[]> {
  const { breaks } = await waitFor('breaks', () => h.get<{ breaks: Break[] }>('/v1/breaks?limit=100'), (b) => b.breaks.length >= count);
  return breaks;
}

/** The database's bytes, with its write-ahead log. */
function stored(db: string): string {
  return [db, `${db}-wal`].filter(existsSync).map((path) => readFileSync(path).toString('latin1')).join('');
}

describe('cachebreak proxy with the provider SDKs', () => {
  it('Anthropic: JSON then SSE, a tool added between the turns is tools_schema_changed', async () => {
    const h = await startProxyHarness();
    const client = new Anthropic({ apiKey: SECRETS.anthropicKey, baseURL: `${h.proxy}/anthropic`, defaultHeaders: { 'x-claude-code-session-id': 'sess-claude' }, maxRetries: 0 });
    const request = { model: 'claude-sonnet-4-5', max_tokens: 100, system: [{ type: 'text' as const, text: SECRETS.system, cache_control: { type: 'ephemeral' as const } }], messages: [{ role: 'user' as const, content: SECRETS.user }] };
    h.anthropic.usage = { input_tokens: 12, cache_creation_input_tokens: 10_000, cache_read_input_tokens: 0 };
    const first = await client.messages.create({ ...request, tools: [readFile] });
    expect(first.content).toEqual([{ type: 'text', text: 'Hello!' }]);
    expect(first.usage.cache_creation_input_tokens).toBe(10_000);
    await pause(5);
    h.anthropic.usage = { input_tokens: 12, cache_creation_input_tokens: 10_500, cache_read_input_tokens: 0 };
    const stream = client.messages.stream({ ...request, tools: [readFile, shell] });
    const second = await stream.finalMessage();
    expect(second.content).toEqual([{ type: 'text', text: 'Hello!' }]);

    const [found] = await breaksOf(h, 1);
    expect(found).toMatchObject({ sessionId: 'sess-claude', provider: 'anthropic', reason: 'tools_schema_changed', changedToolNames: ['shell'], missedCacheReadTokens: 10_000 });
    expect([found!.previousRequestId, found!.requestId]).toEqual(['req_1', 'req_2']);
    // The key went to the upstream, and only there.
    expect(h.anthropic.received.map((r) => r.headers.authorization)).toEqual([`Bearer ${SECRETS.anthropicKey}`, `Bearer ${SECRETS.anthropicKey}`]);
    expect(await h.metric('cachebreak_proxy_observations_total', { provider: 'anthropic', outcome: 'turn' })).toBe(2);
    await h.close();
    const bytes = stored(h.db);
    for (const secret of [...Object.values(SECRETS), 'anthropic-version', 'Anthropic/JS']) expect(bytes).not.toContain(secret);
  });

  it('OpenAI chat (SSE with usage) and Responses (JSON, then SSE): each break is attributed in its own session', async () => {
    const h = await startProxyHarness();
    const client = new OpenAI({ apiKey: SECRETS.openaiKey, baseURL: `${h.proxy}/openai/v1`, maxRetries: 0 });
    const tool = (t: ToolDef) => ({ type: 'function' as const, function: { name: t.name, description: t.description, parameters: t.input_schema } });
    const messages = [
      { role: 'system' as const, content: SECRETS.system },
      { role: 'user' as const, content: SECRETS.user },
    ];
    const chat = async (tools: (ToolDef)[]) => {
      const stream = await client.chat.completions.create(
        { model: 'gpt-4o', messages, tools: tools.map(tool), stream: true, stream_options: { include_usage: true } },
        { headers: { 'x-cachebreak-session': 'sess-chat' } },
      );
      let text = '';
      let usage: unknown;
      for await (const chunk of stream) {
        text += chunk.choices[0]?.delta.content ?? '';
        usage = chunk.usage ?? usage;
      }
      return { text, usage };
    };
    h.openai.usage = { prompt_tokens: 5_000, prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 } };
    expect(await chat([readFile])).toEqual({ text: 'Hello!', usage: expect.objectContaining({ prompt_tokens: 5_000 }) });
    await pause(5);
    h.openai.usage = { prompt_tokens: 5_200, prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 } };
    expect((await chat([readFile, shell])).text).toBe('Hello!');

    const responseTools = (tools: (ToolDef)[]) => tools.map((t) => ({ type: 'function' as const, name: t.name, description: t.description, parameters: t.input_schema, strict: false }));
    const headers = { headers: { 'x-cachebreak-session': 'sess-responses' } };
    h.openai.usage = { input_tokens: 6_000, input_tokens_details: { cached_tokens: 0 } };
    const answered = await client.responses.create({ model: 'gpt-4o', instructions: SECRETS.system, input: SECRETS.user, tools: responseTools([readFile]) }, headers);
    expect(answered.output_text).toBe('Hello!');
    await pause(5);
    h.openai.usage = { input_tokens: 6_100, input_tokens_details: { cached_tokens: 0 } };
    const events: string[] = [];
    for await (const event of await client.responses.create({ model: 'gpt-4o', instructions: SECRETS.system, input: SECRETS.user, tools: responseTools([shell, readFile]), stream: true }, headers)) events.push(event.type);
    expect(events.at(-1)).toBe('response.completed');

    const breaks = await breaksOf(h, 2);
    expect(breaks.map((b) => [b.sessionId, b.provider, b.reason, b.changedToolNames, b.missedCacheReadTokens]).sort()).toEqual([
      ['sess-chat', 'openai', 'tools_schema_changed', ['shell'], 5_000],
      ['sess-responses', 'openai', 'tools_schema_changed', ['shell'], 6_000],
    ]);
    expect(h.openai.received.map((r) => r.url)).toEqual(['/v1/chat/completions', '/v1/chat/completions', '/v1/responses', '/v1/responses']);
    expect(h.openai.received.every((r) => r.headers['x-cachebreak-session'] === undefined && r.headers.authorization === `Bearer ${SECRETS.openaiKey}`)).toBe(true);
    await h.close();
    const bytes = stored(h.db);
    for (const secret of Object.values(SECRETS)) expect(bytes).not.toContain(secret);
  });

  it('Gemini: generateContent then streamGenerateContent (SSE), the model named in the URL', async () => {
    const h = await startProxyHarness();
    const client = new GoogleGenAI({ apiKey: SECRETS.geminiKey, httpOptions: { baseUrl: `${h.proxy}/gemini`, headers: { 'x-cachebreak-session': 'sess-gemini' } } });
    const declaration = (t: ToolDef) => ({ name: t.name, description: t.description, parametersJsonSchema: t.input_schema });
    const config = (tools: (ToolDef)[]) => ({ systemInstruction: SECRETS.system, tools: [{ functionDeclarations: tools.map(declaration) }] });
    h.gemini.usage = { promptTokenCount: 5_000 };
    const first = await client.models.generateContent({ model: 'gemini-2.5-flash', contents: SECRETS.user, config: config([readFile]) });
    expect(first.text).toBe('Hello!');
    await pause(5);
    h.gemini.usage = { promptTokenCount: 5_300, cachedContentTokenCount: 0 };
    let text = '';
    for await (const chunk of await client.models.generateContentStream({ model: 'gemini-2.5-flash', contents: SECRETS.user, config: config([readFile, shell]) })) text += chunk.text ?? '';
    expect(text).toBe('Hello!');

    const [found] = await breaksOf(h, 1);
    expect(found).toMatchObject({ sessionId: 'sess-gemini', provider: 'gemini', reason: 'tools_schema_changed', changedToolNames: ['shell'], missedCacheReadTokens: 5_000 });
    expect(h.gemini.received.map((r) => r.url)).toEqual(['/v1beta/models/gemini-2.5-flash:generateContent', '/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse']);
    await h.close();
    const bytes = stored(h.db);
    for (const secret of Object.values(SECRETS)) expect(bytes).not.toContain(secret);
  });
});
