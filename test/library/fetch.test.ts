// withCachebreak(fetch) with the real provider SDKs (@anthropic-ai/sdk and
// openai take a fetch) against mock upstreams that speak each API: every
// answer reaches the SDK as the upstream sent it, and the wrapped fetch judges
// each call as the server would (a tool added between two turns is a
// tools_schema_changed break); what it cannot read is reported, never thrown.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { toCacheEvent } from '../../src/ingest/http/events.js';
import { Detector, withCachebreak, type CompletedRequest, type Evaluation, type WireEvent } from '../../src/detector/index.js';
import { anthropicAnswer, chatAnswer, geminiAnswer, mockUpstream, responsesAnswer, type Answer, type MockUpstream, type Received, type UsageFields } from '../proxy/upstreams.js';
import { pause, waitFor } from '../proxy/wait.js';

const mocks: MockUpstream[] = [];
afterEach(async () => {
  for (const mock of mocks.splice(0)) await mock.close();
});

/** A mock upstream answering with `usage.current`, as `answer` shapes it. */
type Answering = (request: Received, usage: UsageFields, requestId: string) => Answer;

async function upstream(answer: Answering) {
  const usage: { current: UsageFields } = { current: {} };
  const mock = await mockUpstream((request) => answer(request, usage.current, 'req_upstream'));
  mocks.push(mock);
  return { mock, usage };
}

/** A wrapped fetch whose evaluations and sent events the test reads. */
function observed(extra: Partial<Parameters<typeof withCachebreak>[1]> = {}) {
  const turns: { evaluation: Evaluation; request: CompletedRequest }[] = [];
  const sent: WireEvent[] = [];
  const errors: Error[] = [];
  let n = 0;
  const fetch = withCachebreak(globalThis.fetch, {
    detector: new Detector(),
    requestId: () => `call_${++n}`,
    onTurn: (evaluation, request) => turns.push({ evaluation, request }),
    onError: (error) => errors.push(error),
    sink: { send: (event) => sent.push(event) },
    ...extra,
  });
  // idle() waits for the answers being read; the evaluations are there after it.
  const judged = async (count: number) => {
    await fetch.idle();
    expect(turns.length).toBeGreaterThanOrEqual(count);
    return turns;
  };
  return { fetch, turns, sent, errors, judged };
}

interface ToolDef {
  name: string;
  description: string;
  input_schema: { type: 'object'; properties: Record<string, unknown> };
}
const readFile: ToolDef = { name: 'read_file', description: 'reads a file', input_schema: { type: 'object', properties: { path: { type: 'string' } } } };
const shell: ToolDef = { name: 'shell', description: 'runs a command', input_schema: { type: 'object', properties: { command: { type: 'string' } } } };

describe('withCachebreak(fetch)', () => {
  it('@anthropic-ai/sdk: JSON then SSE; the answers pass untouched, and the tool added is tools_schema_changed', async () => {
    const { mock, usage } = await upstream(anthropicAnswer);
    const o = observed({ sessionId: (call) => call.headers.get('x-session') ?? 'none' });
    const client = new Anthropic({ apiKey: 'sk-ant-test', baseURL: mock.url, fetch: o.fetch, maxRetries: 0, defaultHeaders: { 'x-session': 'sess-claude' } });
    const request = { model: 'claude-sonnet-4-5', max_tokens: 100, system: [{ type: 'text' as const, text: 'You are careful.', cache_control: { type: 'ephemeral' as const } }], messages: [{ role: 'user' as const, content: 'list the files' }] };
    usage.current = { input_tokens: 12, cache_creation_input_tokens: 10_000, cache_read_input_tokens: 0 };
    const first = await client.messages.create({ ...request, tools: [readFile] });
    expect(first.content).toEqual([{ type: 'text', text: 'Hello!' }]);
    await o.judged(1);
    await pause(5);
    usage.current = { input_tokens: 12, cache_creation_input_tokens: 10_500, cache_read_input_tokens: 0 };
    const second = await client.messages.stream({ ...request, tools: [readFile, shell] }).finalMessage();
    expect(second.content).toEqual([{ type: 'text', text: 'Hello!' }]);
    expect(second.usage.cache_creation_input_tokens).toBe(10_500);

    const [a, b] = await o.judged(2);
    expect(a!.evaluation).toMatchObject({ requestId: 'call_1', state: 'cold', break: null });
    expect(b!.evaluation).toMatchObject({ requestId: 'call_2', state: 'miss', previousRequestId: 'call_1' });
    expect(b!.evaluation.break).toMatchObject({ sessionId: 'sess-claude', provider: 'anthropic', reason: 'tools_schema_changed', changedToolNames: ['shell'], missedCacheReadTokens: 10_000 });
    // A streamed answer's first byte is its time to first token.
    expect(b!.request.ttftMs).toBeGreaterThanOrEqual(0);
    expect(a!.request.ttftMs).toBeUndefined();
    // The events sent are the SPEC §2 contract: the server reads them back to the same turns.
    expect(o.sent.map((event) => toCacheEvent(event).ok)).toEqual([true, true]);
    expect(o.errors).toEqual([]);
  });

  it('openai: chat (SSE with usage) and Responses (JSON then SSE), each in its own session', async () => {
    const chat = await upstream(chatAnswer);
    const o = observed({ sessionId: (call) => (call.url.endsWith('/responses') ? 'sess-responses' : 'sess-chat') });
    const client = new OpenAI({ apiKey: 'sk-test', baseURL: `${chat.mock.url}/v1`, fetch: o.fetch, maxRetries: 0 });
    const tool = (t: ToolDef) => ({ type: 'function' as const, function: { name: t.name, description: t.description, parameters: t.input_schema } });
    const messages = [
      { role: 'system' as const, content: 'You are careful.' },
      { role: 'user' as const, content: 'list the files' },
    ];
    const streamed = async (tools: ToolDef[]) => {
      let text = '';
      for await (const chunk of await client.chat.completions.create({ model: 'gpt-4o', messages, tools: tools.map(tool), stream: true, stream_options: { include_usage: true } })) {
        text += chunk.choices[0]?.delta.content ?? '';
      }
      return text;
    };
    chat.usage.current = { prompt_tokens: 5_000, prompt_tokens_details: { cached_tokens: 0 } };
    expect(await streamed([readFile])).toBe('Hello!');
    await o.judged(1);
    await pause(5);
    chat.usage.current = { prompt_tokens: 5_200, prompt_tokens_details: { cached_tokens: 0 } };
    expect(await streamed([readFile, shell])).toBe('Hello!');
    await o.judged(2);

    const responses = await upstream(responsesAnswer);
    const client2 = new OpenAI({ apiKey: 'sk-test', baseURL: `${responses.mock.url}/v1`, fetch: o.fetch, maxRetries: 0 });
    const responseTools = (tools: ToolDef[]) => tools.map((t) => ({ type: 'function' as const, name: t.name, description: t.description, parameters: t.input_schema, strict: false }));
    responses.usage.current = { input_tokens: 6_000, input_tokens_details: { cached_tokens: 0 } };
    expect((await client2.responses.create({ model: 'gpt-4o', instructions: 'You are careful.', input: 'list the files', tools: responseTools([readFile]) })).output_text).toBe('Hello!');
    await o.judged(3);
    await pause(5);
    responses.usage.current = { input_tokens: 6_100, input_tokens_details: { cached_tokens: 0 } };
    const types: string[] = [];
    for await (const event of await client2.responses.create({ model: 'gpt-4o', instructions: 'You are careful.', input: 'list the files', tools: responseTools([shell, readFile]), stream: true })) types.push(event.type);
    expect(types.at(-1)).toBe('response.completed');

    const turns = await o.judged(4);
    expect(turns.map((t) => [t.request.sessionId, t.evaluation.state, t.evaluation.break?.reason ?? null, t.evaluation.break?.changedToolNames ?? null])).toEqual([
      ['sess-chat', 'cold', null, null],
      ['sess-chat', 'miss', 'tools_schema_changed', ['shell']],
      ['sess-responses', 'cold', null, null],
      ['sess-responses', 'miss', 'tools_schema_changed', ['shell']],
    ]);
    expect(o.errors).toEqual([]);
  });

  it('Gemini over plain fetch: the model named in the URL, the answer an event stream with CRLF', async () => {
    const { mock, usage } = await upstream(geminiAnswer);
    const o = observed();
    const call = (tools: string[], stream: boolean) =>
      o.fetch(`${mock.url}/v1beta/models/gemini-2.5-flash:${stream ? 'streamGenerateContent?alt=sse' : 'generateContent'}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ systemInstruction: { parts: [{ text: 'You are careful.' }] }, contents: [{ role: 'user', parts: [{ text: 'hi' }] }], tools: [{ functionDeclarations: tools.map((name) => ({ name, description: name })) }] }),
      });
    usage.current = { promptTokenCount: 5_000 };
    expect((await (await call(['read_file'], false)).json()) as object).toHaveProperty('candidates');
    await o.judged(1);
    await pause(5);
    usage.current = { promptTokenCount: 5_300, cachedContentTokenCount: 0 };
    expect(await (await call(['read_file', 'shell'], true)).text()).toContain('data: ');
    const [, second] = await o.judged(2);
    expect(second!.request).toMatchObject({ provider: 'gemini', snapshot: { model: 'gemini-2.5-flash' } });
    expect(second!.evaluation.break).toMatchObject({ reason: 'tools_schema_changed', changedToolNames: ['shell'], missedCacheReadTokens: 5_000 });
  });

  it('passes other calls and failed answers through unjudged, and reports what it cannot read', async () => {
    const fixed = (status: number, body: string) => ({ status, headers: { 'content-type': 'application/json' }, chunks: [body] });
    const { mock, usage } = await upstream((request, fields, id) => {
      if (request.url.endsWith('/v1/models')) return fixed(200, '{"data":[]}');
      if (request.url.startsWith('/fail/')) return fixed(529, '{"type":"error"}');
      if (request.url.startsWith('/odd/')) return fixed(200, '{"usage":{"input_tokens":1}}');
      return anthropicAnswer(request, fields, id);
    });
    usage.current = { input_tokens: 12, cache_creation_input_tokens: 10_000, cache_read_input_tokens: 0 };
    const o = observed();
    expect(await (await o.fetch(`${mock.url}/v1/models`)).json()).toEqual({ data: [] });
    const failed = await o.fetch(`${mock.url}/fail/v1/messages`, { method: 'POST', body: JSON.stringify({ model: 'claude-sonnet-4-5', messages: [] }) });
    expect(failed.status).toBe(529);
    // A body that is not JSON: the call goes through as sent; the problem is reported.
    const odd = await o.fetch(`${mock.url}/odd/v1/messages`, { method: 'POST', body: 'not json' });
    expect(odd.status).toBe(200);
    await waitFor('the report', async () => o.errors, (errors) => errors.length >= 1);
    expect(o.errors[0]!.message).toMatch(/JSON/);
    // A Request object is read from a copy: the upstream still gets the body.
    const asRequest = new Request(`${mock.url}/v1/messages`, { method: 'POST', body: JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }) });
    expect((await o.fetch(asRequest)).status).toBe(200);
    await o.judged(1);
    expect(JSON.parse(mock.received.at(-1)!.body.toString())).toMatchObject({ model: 'claude-sonnet-4-5' });
    expect(o.turns).toHaveLength(1);
    expect(mock.received.map((r) => r.url)).toEqual(['/v1/models', '/fail/v1/messages', '/odd/v1/messages', '/v1/messages']);

    // An answer longer than responseLimit is not held: reported, and the caller still gets all of it.
    const small = observed({ responseLimit: 50 });
    const long = await small.fetch(`${mock.url}/v1/messages`, { method: 'POST', body: JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 5, stream: true, messages: [{ role: 'user', content: 'hi' }] }) });
    expect(await long.text()).toContain('event: message_stop');
    await small.fetch.idle();
    expect(small.turns).toEqual([]);
    expect(small.errors.map((e) => e.message)).toEqual(['response: more than 50 characters to hold']);
  });
});
