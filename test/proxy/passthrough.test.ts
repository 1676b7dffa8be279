// What goes through the proxy is what the client and the upstream sent, byte
// for byte, in every wire format of the three APIs, and each call is stored
// with the usage its answer reported. Requests the proxy does not front are
// answered 404 and reach no upstream: it is not an open relay.
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { geminiResponseId } from '../../src/ingest/proxy/gemini.js';
import { send, sendRaw } from './client.js';
import { startProxyHarness, type ProxyHarness } from './harness.js';
import { waitFor } from './wait.js';

interface Turn {
  requestId: string;
  agentId: string;
  provider: string;
  model: string;
  state: string;
  usage: { uncached: number; read: number; write: number; output: number } | null;
  break: { reason: string; changedSystemBlocks: number[] | null } | null;
}

const anthropicBody = (stream: boolean) => JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 50, stream, system: 'Be brief.', messages: [{ role: 'user', content: 'hi' }] });
const chatBody = (stream: boolean) => JSON.stringify({ model: 'gpt-4o', stream, ...(stream ? { stream_options: { include_usage: true } } : {}), messages: [{ role: 'user', content: 'hi' }] });
const responsesBody = (stream: boolean) => JSON.stringify({ model: 'gpt-4o', stream, input: 'hi' });
const geminiBody = JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }] });

const CASES = [
  { name: 'Anthropic JSON', mock: 'anthropic', path: '/anthropic/v1/messages', body: anthropicBody(false), upstreamPath: '/v1/messages' },
  { name: 'Anthropic SSE', mock: 'anthropic', path: '/anthropic/v1/messages', body: anthropicBody(true), upstreamPath: '/v1/messages' },
  { name: 'OpenAI chat JSON', mock: 'openai', path: '/openai/v1/chat/completions', body: chatBody(false), upstreamPath: '/v1/chat/completions' },
  { name: 'OpenAI chat SSE', mock: 'openai', path: '/openai/v1/chat/completions', body: chatBody(true), upstreamPath: '/v1/chat/completions' },
  { name: 'OpenAI Responses JSON', mock: 'openai', path: '/openai/v1/responses', body: responsesBody(false), upstreamPath: '/v1/responses' },
  { name: 'OpenAI Responses SSE', mock: 'openai', path: '/openai/v1/responses', body: responsesBody(true), upstreamPath: '/v1/responses' },
  { name: 'Gemini JSON', mock: 'gemini', path: '/gemini/v1beta/models/gemini-2.5-flash:generateContent', body: geminiBody, upstreamPath: '/v1beta/models/gemini-2.5-flash:generateContent' },
  { name: 'Gemini SSE (CRLF)', mock: 'gemini', path: '/gemini/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse', body: geminiBody, upstreamPath: '/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse' },
  { name: 'Gemini JSON-array stream', mock: 'gemini', path: '/gemini/v1beta/models/gemini-2.5-flash:streamGenerateContent', body: geminiBody, upstreamPath: '/v1beta/models/gemini-2.5-flash:streamGenerateContent' },
] as const;

function setUsage(h: ProxyHarness): void {
  h.anthropic.usage = { input_tokens: 30, cache_creation_input_tokens: 3_000, cache_read_input_tokens: 1_000 };
  h.openai.usage = { prompt_tokens: 4_000, prompt_tokens_details: { cached_tokens: 1_000 }, input_tokens: 4_000, input_tokens_details: { cached_tokens: 1_000 } };
  h.gemini.usage = { promptTokenCount: 4_000, cachedContentTokenCount: 1_000 };
}

async function turnsOf(h: ProxyHarness, sessionId: string, count: number): Promise<Turn[]> {
  const read = () => h.get<{ turns: Turn[] }>(`/v1/sessions/${sessionId}/turns`).catch(() => ({ turns: [] as Turn[] }));
  return (await waitFor(`turns of ${sessionId}`, read, (body) => body.turns.length >= count)).turns;
}

describe('passthrough', () => {
  it('answers every wire format of the three APIs byte for byte, and forwards the request unchanged but for its own headers', async () => {
    const h = await startProxyHarness();
    setUsage(h);
    const answers: string[] = [];
    for (const [i, c] of CASES.entries()) {
      const mock = h[c.mock];
      const headers = { 'content-type': 'application/json', authorization: 'Bearer client-key', 'x-custom': 'kept', 'x-cachebreak-session': `s${i}`, 'x-cachebreak-agent': 'a' };
      const answer = await send(h.proxy, 'POST', c.path, headers, c.body);
      const received = mock.received.at(-1)!;
      answers.push(mock.sent.at(-1)!.toString());
      expect(answer.status, c.name).toBe(200);
      expect(answer.body.equals(mock.sent.at(-1)!), c.name).toBe(true);
      expect(answer.headers['content-type'], c.name).toMatch(/^(application\/json|text\/event-stream)/);
      expect(received.url, c.name).toBe(c.upstreamPath);
      expect(received.body.toString(), c.name).toBe(c.body);
      expect(received.headers, c.name).toMatchObject({ authorization: 'Bearer client-key', 'x-custom': 'kept', 'content-length': String(Buffer.byteLength(c.body)), host: new URL(mock.url).host });
      expect(Object.keys(received.headers).filter((name) => name.startsWith('x-cachebreak')), c.name).toEqual([]);
    }
    // Each call is a turn of its own session, with the usage its answer reported.
    for (const [i, c] of CASES.entries()) {
      const [turn] = await turnsOf(h, `s${i}`, 1);
      const expected = c.mock === 'anthropic' ? { uncached: 30, read: 1_000, write: 3_000 } : { uncached: 3_000, read: 1_000, write: 0 };
      expect(turn, c.name).toMatchObject({ agentId: 'a', provider: c.mock, usage: expected });
      // A Gemini call is named by its answer's responseId, as Gemini CLI's telemetry names it.
      if (c.mock === 'gemini') expect(turn!.requestId, c.name).toBe(/"responseId":"([^"]+)"/.exec(answers[i]!)?.[1]);
    }
    expect(await h.metric('cachebreak_proxy_requests_total', { outcome: 'forwarded' })).toBeGreaterThan(0);
  });

  it('tells a subagent from the main thread by its first system block, so interleaved calls are no break', async () => {
    const h = await startProxyHarness();
    const call = (system: string, usage: Record<string, number>) => {
      h.anthropic.usage = usage;
      const body = JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 50, system: [{ type: 'text', text: system }, { type: 'text', text: 'shared instructions' }], messages: [{ role: 'user', content: 'hi' }] });
      return send(h.proxy, 'POST', '/anthropic/v1/messages', { 'x-claude-code-session-id': 'mixed' }, body);
    };
    await call('main thread', { input_tokens: 10, cache_creation_input_tokens: 20_000, cache_read_input_tokens: 0 });
    await call('subagent', { input_tokens: 10, cache_creation_input_tokens: 8_000, cache_read_input_tokens: 0 });
    await call('main thread', { input_tokens: 10, cache_creation_input_tokens: 100, cache_read_input_tokens: 20_000 });
    const turns = await turnsOf(h, 'mixed', 3);
    const agents = turns.map((t) => t.agentId);
    expect(agents[0]).toMatch(/^system-[0-9a-f]{8}$/);
    expect(agents).toEqual([agents[0], expect.not.stringMatching(agents[0]!), agents[0]]);
    expect(turns.map((t) => t.state)).toEqual(['cold', 'cold', 'hit']);
  });

  it('follows a conversation across an edit of its system prompt (a break of its stream), beside a subagent and a router call of their own', async () => {
    const h = await startProxyHarness();
    const conversation = ['fix the tests', 'reading', 'done?', 'yes', 'now the docs'];
    const call = (model: string, system: string, messages: number, usage: Record<string, number>) => {
      h.anthropic.usage = { input_tokens: 10, ...usage };
      const body = JSON.stringify({
        model,
        max_tokens: 50,
        system: [{ type: 'text', text: system }, { type: 'text', text: 'project notes' }],
        messages: conversation.slice(0, messages).map((content, i) => ({ role: i % 2 === 0 ? 'user' : 'assistant', content })),
      });
      return send(h.proxy, 'POST', '/anthropic/v1/messages', { 'x-cachebreak-session': 'edited' }, body);
    };
    await call('claude-sonnet-4-5', 'You are a coding agent. QWEN.md: v1', 1, { cache_creation_input_tokens: 20_000, cache_read_input_tokens: 0 });
    await call('claude-sonnet-4-5', 'You are a coding agent. QWEN.md: v1', 3, { cache_creation_input_tokens: 300, cache_read_input_tokens: 20_000 });
    // A subagent (its own system and task) and a router call (its own system and model, the same conversation).
    await call('claude-sonnet-4-5', 'You are a search subagent.', 1, { cache_creation_input_tokens: 8_000, cache_read_input_tokens: 0 });
    await call('claude-haiku-4-5', 'Route this request.', 3, { cache_creation_input_tokens: 4_000, cache_read_input_tokens: 0 });
    // The user edits QWEN.md: the conversation goes on under the new system prompt.
    await call('claude-sonnet-4-5', 'You are a coding agent. QWEN.md: v2', 5, { cache_creation_input_tokens: 20_500, cache_read_input_tokens: 0 });
    const turns = await turnsOf(h, 'edited', 5);
    const agents = turns.map((t) => t.agentId);
    expect(new Set(agents).size).toBe(3);
    expect(agents[4]).toBe(agents[0]);
    expect(turns.map((t) => t.state)).toEqual(['cold', 'hit', 'cold', 'cold', 'miss']);
    expect(turns[4]!.break).toMatchObject({ reason: 'system_changed', changedSystemBlocks: [0] });
  });

  it('reads the usage of a compressed answer and passes the compressed bytes on', async () => {
    const h = await startProxyHarness();
    const compressed = gzipSync(JSON.stringify({ id: 'msg_1', type: 'message', role: 'assistant', content: [], usage: { input_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 7_000, output_tokens: 3 } }));
    h.anthropic.answer = () => ({ status: 200, headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' }, chunks: [compressed.subarray(0, 10), compressed.subarray(10)] });
    const answer = await send(h.proxy, 'POST', '/anthropic/v1/messages', { 'accept-encoding': 'gzip', 'x-cachebreak-session': 'gz' }, anthropicBody(false));
    expect(answer.headers['content-encoding']).toBe('gzip');
    expect(answer.body.equals(compressed)).toBe(true);
    const [turn] = await turnsOf(h, 'gz', 1);
    expect(turn!.usage).toMatchObject({ uncached: 5, read: 7_000, write: 0 });
  });

  it('forwards what it does not observe (GET /v1/models) untouched and stores nothing of it', async () => {
    const h = await startProxyHarness();
    h.openai.answer = () => ({ status: 200, headers: { 'content-type': 'application/json' }, chunks: ['{"object":"list","data":[]}'] });
    const answer = await send(h.proxy, 'GET', '/openai/v1/models?limit=2', { authorization: 'Bearer k' });
    expect(answer.body.toString()).toBe('{"object":"list","data":[]}');
    expect(h.openai.received.at(-1)!.url).toBe('/v1/models?limit=2');
    expect(await h.metric('cachebreak_proxy_requests_total', { provider: 'openai', outcome: 'forwarded' })).toBe(1);
    expect(await h.metric('cachebreak_proxy_observations_total', { provider: 'openai' })).toBe(0);
  });

  it('is no open relay: absolute URIs, unknown prefixes and look-alike prefixes are 404 and reach no upstream', async () => {
    const h = await startProxyHarness();
    const absolute = await sendRaw(h.proxy, 'GET http://127.0.0.1:1/secret HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n');
    expect(absolute).toMatch(/^HTTP\/1\.1 404 /);
    const connectTunnel = await sendRaw(h.proxy, `CONNECT ${new URL(h.anthropic.url).host} HTTP/1.1\r\nHost: x\r\n\r\n`);
    expect(connectTunnel).not.toMatch(/^HTTP\/1\.1 200/);
    for (const path of ['/', '/v1/messages', '/anthropicx/v1/messages', '/openai2/v1/chat/completions', '//api.openai.com/v1/models']) {
      const answer = await send(h.proxy, 'POST', path, { 'content-type': 'application/json' }, '{}');
      expect(answer.status, path).toBe(404);
      expect(JSON.parse(answer.body.toString()).error.message, path).toMatch(/forwards only \/anthropic/);
    }
    // The Host header names no destination: it is checked (no DNS rebinding), never followed.
    const rebound = await send(h.proxy, 'POST', '/anthropic/v1/messages', { host: 'attacker.example.com' }, anthropicBody(false));
    expect(rebound.status).toBe(403);
    expect([h.anthropic, h.openai, h.gemini].map((m) => m.received.length)).toEqual([0, 0, 0]);
    expect(await h.metric('cachebreak_proxy_requests_total', { outcome: 'unknown_path' })).toBe(6);
    expect(await h.metric('cachebreak_proxy_requests_total', { outcome: 'refused' })).toBe(1);
  });

  it('answers 400 to a path with a .. segment, however encoded, and forwards it nowhere', async () => {
    const h = await startProxyHarness();
    const climbing = [
      '/anthropic/../secret',
      '/anthropic/v1/../../admin',
      '/openai/v1/%2e%2e/%2E%2E/internal',
      '/openai/v1/.%2e/x',
      '/gemini/v1beta/models%2f..%2fadmin',
      '/gemini/v1beta/..%5cadmin',
      '/anthropic/..',
      '/anthropic/..?x=1',
    ];
    for (const path of climbing) {
      const answer = await sendRaw(h.proxy, `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`);
      expect(answer, path).toMatch(/^HTTP\/1\.1 400 /);
      expect(answer, path).toMatch(/has a .{0,3}\.\..{0,3} segment .*below the configured upstream base path/);
    }
    expect([h.anthropic, h.openai, h.gemini].map((m) => m.received.length)).toEqual([0, 0, 0]);
    const refused = (provider: string) => h.metric('cachebreak_proxy_requests_total', { provider, outcome: 'bad_path' });
    expect([await refused('anthropic'), await refused('openai'), await refused('gemini')]).toEqual([4, 2, 2]);
    // Dots inside a name, or in the query, are no segment of their own: forwarded.
    h.openai.answer = () => ({ status: 200, headers: { 'content-type': 'application/json' }, chunks: ['{}'] });
    const dotted = await send(h.proxy, 'GET', '/openai/v1/files/a..b?after=..', {});
    expect(dotted.status).toBe(200);
    expect(h.openai.received.at(-1)!.url).toBe('/v1/files/a..b?after=..');
  });
});

describe('geminiResponseId', () => {
  it('reads the responseId of an answer or of a stream\'s chunks, and none when the API sent none', () => {
    expect(geminiResponseId({ responseId: 'r1', usageMetadata: {} })).toBe('r1');
    expect(geminiResponseId([{ candidates: [] }, { responseId: 'r2' }])).toBe('r2');
    expect(geminiResponseId({ usageMetadata: { promptTokenCount: 3 } })).toBeUndefined();
    expect(geminiResponseId([{ responseId: '' }, null])).toBeUndefined();
    expect(geminiResponseId(undefined)).toBeUndefined();
  });
});
