// Mock provider APIs on 127.0.0.1 that speak the real wire formats: Anthropic
// Messages (JSON and SSE), OpenAI Chat Completions and Responses (JSON and
// SSE), Gemini generateContent (JSON, SSE with CRLF, and the JSON-array
// stream). Each records what it received and the exact bytes it sent, and
// answers with the usage the test sets.
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface Received {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** Usage for the next answers, in the provider's own field names. */
export type UsageFields = Record<string, unknown>;

export interface Answer {
  status: number;
  headers: Record<string, string>;
  /** Written one after another, each flushed; `delayMs` between them. */
  chunks: (string | Buffer)[];
  delayMs?: number;
  /** Delay before the status line. */
  firstDelayMs?: number;
  /** Destroy the connection after this many chunks. */
  resetAfter?: number;
}

export interface MockUpstream {
  url: string;
  received: Received[];
  /** The bytes of each answer, as sent. */
  sent: Buffer[];
  /** Connections the client side closed before an answer was complete. */
  cutOff: number;
  /** What the next requests get; set by the test. */
  answer: (request: Received) => Answer;
  close(): Promise<void>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function mockUpstream(answer: (request: Received) => Answer): Promise<MockUpstream> {
  const sockets = new Set<Socket>();
  const mock: MockUpstream = {
    url: '',
    received: [],
    sent: [],
    cutOff: 0,
    answer,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const parts: Buffer[] = [];
    for await (const part of req) parts.push(part as Buffer);
    const request: Received = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(parts) };
    mock.received.push(request);
    const reply = mock.answer(request);
    const sent: Buffer[] = [];
    let finished = false;
    res.on('close', () => {
      if (!finished) mock.cutOff++;
    });
    if (reply.firstDelayMs) await sleep(reply.firstDelayMs);
    res.writeHead(reply.status, reply.headers);
    for (const [i, chunk] of reply.chunks.entries()) {
      if (reply.resetAfter === i) {
        res.socket?.destroy();
        return;
      }
      if (res.destroyed) return;
      const bytes = Buffer.from(chunk);
      sent.push(bytes);
      res.write(bytes);
      if (reply.delayMs) await sleep(reply.delayMs);
    }
    finished = true;
    mock.sent.push(Buffer.concat(sent));
    res.end();
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  mock.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return mock;
}

const json = (status: number, body: unknown, extra: Record<string, string> = {}): Answer => ({
  status,
  headers: { 'content-type': 'application/json', ...extra },
  chunks: [JSON.stringify(body)],
});

const sse = (events: string[], extra: Record<string, string> = {}, separator = '\n\n'): Answer => ({
  status: 200,
  headers: { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', ...extra },
  chunks: events.map((event) => event + separator),
});

/** Anthropic Messages: usage as the API reports it (input_tokens excludes the cache). */
export function anthropicAnswer(request: Received, usage: UsageFields, requestId: string): Answer {
  const body = JSON.parse(request.body.toString()) as { model: string; stream?: boolean };
  const message = { id: 'msg_01XFDUDYJgAACzvnptvVoYEL', type: 'message', role: 'assistant', model: body.model, content: [] as unknown[], stop_reason: null, stop_sequence: null };
  if (!body.stream) {
    return json(200, { ...message, content: [{ type: 'text', text: 'Hello!' }], stop_reason: 'end_turn', usage: { ...usage, output_tokens: 6, service_tier: 'standard' } }, { 'request-id': requestId });
  }
  const data = (type: string, value: unknown) => `event: ${type}\ndata: ${JSON.stringify(value)}`;
  return sse(
    [
      data('message_start', { type: 'message_start', message: { ...message, usage: { ...usage, output_tokens: 1 } } }),
      data('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
      'event: ping\ndata: {"type": "ping"}',
      data('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hello' } }),
      data('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: '!' } }),
      data('content_block_stop', { type: 'content_block_stop', index: 0 }),
      data('message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 6 } }),
      data('message_stop', { type: 'message_stop' }),
    ],
    { 'request-id': requestId },
  );
}

/** OpenAI Chat Completions: prompt_tokens includes the cached tokens. */
export function chatAnswer(request: Received, usage: UsageFields): Answer {
  const body = JSON.parse(request.body.toString()) as { model: string; stream?: boolean };
  const base = { id: 'chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG', created: 1764496800, model: `${body.model}-2024-08-06`, system_fingerprint: 'fp_50cad350e4' };
  const full = { ...usage, completion_tokens: 6, total_tokens: Number(usage.prompt_tokens) + 6, completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 } };
  if (!body.stream) {
    return json(200, { ...base, object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: 'Hello!', refusal: null, annotations: [] }, logprobs: null, finish_reason: 'stop' }], usage: full, service_tier: 'default' }, { 'x-request-id': 'req_chat_1' });
  }
  const chunk = (choices: unknown[], u: unknown) => `data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', choices, usage: u })}`;
  return sse([
    chunk([{ index: 0, delta: { role: 'assistant', content: '', refusal: null }, logprobs: null, finish_reason: null }], null),
    chunk([{ index: 0, delta: { content: 'Hello' }, logprobs: null, finish_reason: null }], null),
    chunk([{ index: 0, delta: { content: '!' }, logprobs: null, finish_reason: null }], null),
    chunk([{ index: 0, delta: {}, logprobs: null, finish_reason: 'stop' }], null),
    chunk([], full),
    'data: [DONE]',
  ]);
}

/** OpenAI Responses: input_tokens includes the cached tokens; `id` is the response's. */
export function responsesAnswer(request: Received, usage: UsageFields, id = 'resp_67ccd3a9da748190baa7f1570fe91ac6'): Answer {
  const body = JSON.parse(request.body.toString()) as { model: string; stream?: boolean };
  const item = { id: 'msg_67ccd3acc8d48190a77525dc', type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: 'Hello!', annotations: [], logprobs: [] }] };
  const full = { ...usage, output_tokens: 6, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: Number(usage.input_tokens) + 6 };
  const response = (status: string, output: unknown[], u: unknown) => ({ id, object: 'response', created_at: 1764496800, status, error: null, incomplete_details: null, instructions: null, model: `${body.model}-2024-08-06`, output, parallel_tool_calls: true, tool_choice: 'auto', tools: [], usage: u });
  if (!body.stream) return json(200, response('completed', [item], full));
  let n = 0;
  const event = (type: string, value: Record<string, unknown>) => `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: n++, ...value })}`;
  return sse([
    event('response.created', { response: response('in_progress', [], null) }),
    event('response.output_item.added', { output_index: 0, item: { ...item, status: 'in_progress', content: [] } }),
    event('response.output_text.delta', { item_id: item.id, output_index: 0, content_index: 0, delta: 'Hello!' }),
    event('response.output_item.done', { output_index: 0, item }),
    event('response.completed', { response: response('completed', [item], full) }),
  ]);
}

/** Gemini: promptTokenCount includes cachedContentTokenCount; zero fields are omitted. */
/** `responseId`: what the API names its answer by, a new one each answer (every chunk of a stream names the same one). */
export function geminiAnswer(request: Received, usage: UsageFields, text = 'Hello!', responseId = randomBytes(16).toString('base64url').slice(0, 22)): Answer {
  const [head, tail] = [text.slice(0, -1), text.slice(-1)];
  const chunk = (text: string, final: boolean) => ({
    candidates: [{ content: { parts: [{ text }], role: 'model' }, ...(final ? { finishReason: 'STOP' } : {}), index: 0 }],
    usageMetadata: final ? { ...usage, candidatesTokenCount: 6, totalTokenCount: Number(usage.promptTokenCount) + 6 } : { promptTokenCount: usage.promptTokenCount, totalTokenCount: usage.promptTokenCount },
    modelVersion: 'gemini-2.5-flash',
    responseId,
  });
  if (request.url.includes(':streamGenerateContent')) {
    if (request.url.includes('alt=sse')) return sse([`data: ${JSON.stringify(chunk(head, false))}`, `data: ${JSON.stringify(chunk(tail, true))}`], {}, '\r\n\r\n');
    return { status: 200, headers: { 'content-type': 'application/json; charset=UTF-8' }, chunks: ['[', JSON.stringify(chunk(head, false)), ',\r\n', JSON.stringify(chunk(tail, true)), ']'] };
  }
  return json(200, chunk(text, true));
}

/**
 * A provider's prompt cache, as the API keeps it: a request reads the longest
 * run of its leading parts (tools, system, each message, serialized) that an
 * earlier request sent, a token every 4 characters. What the real API would
 * have read, so that only a prompt a harness really changed misses.
 */
export function promptCache(): (parts: readonly unknown[]) => { prompt: number; cached: number } {
  const seen = new Set<string>();
  return (parts) => {
    const texts = parts.map((part) => JSON.stringify(part) ?? '');
    let cachedChars = 0;
    let prefix = '';
    let length = 0;
    let reading = true;
    for (const text of texts) {
      prefix += `\u0000${text}`;
      length += text.length;
      if (reading && seen.has(prefix)) cachedChars = length;
      else reading = false;
      seen.add(prefix);
    }
    return { prompt: Math.ceil(length / 4), cached: Math.floor(cachedChars / 4) };
  };
}
