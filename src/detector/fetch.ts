// withCachebreak(fetch): any fetch-based SDK (Anthropic, OpenAI, Gemini…)
// observed the way the proxy observes it: the request body becomes a
// snapshot, a copy of the response (JSON or event stream) its usage, and the
// completed request goes to a Detector, and to a sender when one is given.
// The caller's response is passed on as it arrives; nothing here can fail
// the call: a request that cannot be read is passed through and reported.
import { UsageText } from '../core/sse.js';
import type { Evaluation, SnapshotContent } from '../core/types.js';
import { toWireEvent } from '../core/wire.js';
import { anthropicApi } from '../ingest/proxy/anthropic.js';
import type { ObservedCall, ProviderApi } from '../ingest/proxy/api.js';
import { geminiApi } from '../ingest/proxy/gemini.js';
import { openaiApi } from '../ingest/proxy/openai.js';
import { completedEvent, Detector, type CompletedRequest } from './detector.js';
import { snapshotFromRequest, usageFromResponse } from './requests.js';

type Fetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

export interface WithCachebreakOptions {
  /** Where turns are judged; default a new Detector. */
  detector?: Detector;
  /** The conversation a request belongs to (SPEC §1); default "default". */
  sessionId?: string | ((call: ModelCall) => string);
  /** The stream within it; default "main". */
  agentId?: string | ((call: ModelCall) => string);
  /** Each completed request's evaluation (its state and, on a miss, its break record). */
  onTurn?: (evaluation: Evaluation, request: CompletedRequest) => void;
  /** A sender for the events (e.g. cachebreak/client's CachebreakClient). */
  sink?: { send(event: Record<string, unknown> & { type: 'turn' | 'snapshot' | 'usage'; requestId: string }): void };
  /** Told when a request or response cannot be read; the call itself is unaffected. */
  onError?: (error: Error) => void;
  /** Characters of a response held at most while reading its usage. Default 16 MiB. */
  responseLimit?: number;
  /** Request ids; default random UUIDs. */
  requestId?: () => string;
}

/** The provider APIs recognised by path, as the proxy recognises them (the SDK's base URL may hold any prefix). */
const APIS: readonly ProviderApi[] = [anthropicApi, openaiApi, geminiApi];

function callOf(method: string, url: URL): { provider: string; call: ObservedCall } | undefined {
  for (const api of APIS) {
    const call = api.observed(method, url.pathname);
    if (call) return { provider: api.provider, call };
  }
  return undefined;
}

/** What identifies a call to the harness: where it went and the headers it carried (a session header, say). */
export interface ModelCall {
  method: string;
  url: string;
  headers: Headers;
}

function callInfo(input: string | URL | Request, init: RequestInit | undefined): ModelCall {
  const request = input instanceof Request ? input : undefined;
  return {
    method: (init?.method ?? request?.method ?? 'GET').toUpperCase(),
    url: request ? request.url : String(input),
    headers: new Headers(init?.headers ?? request?.headers),
  };
}

/** The request body as text, read from a copy; undefined for a body that is not held in memory (a stream, a form). */
async function bodyText(input: string | URL | Request, init: RequestInit | undefined): Promise<string | undefined> {
  const body = init?.body;
  if (typeof body === 'string') return body;
  if (body instanceof ArrayBuffer || ArrayBuffer.isView(body)) return new TextDecoder().decode(body);
  if (body === undefined && input instanceof Request) return input.clone().text();
  return undefined;
}

const pick = (value: string | ((call: ModelCall) => string) | undefined, call: ModelCall, fallback: string) =>
  value === undefined ? fallback : typeof value === 'string' ? value : value(call);

/** A wrapped fetch, and a way to wait for the calls it is still reading (before a harness exits). */
export type CachebreakFetch<F> = F & {
  /** Resolves once every answer read so far has been judged (and handed to the sink). */
  idle(): Promise<void>;
};

/** Wraps `fetch` so that every model call through it is judged; returns a fetch of the same shape. */
export function withCachebreak<F extends Fetch>(fetchImpl: F, options: WithCachebreakOptions = {}): CachebreakFetch<F> {
  const reading = new Set<Promise<void>>();
  const detector = options.detector ?? new Detector();
  const report = (error: unknown) => {
    try {
      options.onError?.(error instanceof Error ? error : new Error(String(error)));
    } catch {
      // The harness's handler failing must not reach its call.
    }
  };
  const wrapped = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    let call: ModelCall | undefined;
    let observed: { provider: string; call: ObservedCall; body: string } | undefined;
    try {
      call = callInfo(input, init);
      const found = callOf(call.method, new URL(call.url));
      const body = found && (await bodyText(input, init));
      if (found && body !== undefined) observed = { ...found, body };
    } catch (error) {
      report(error);
    }
    const startMs = Date.now();
    const response = await fetchImpl(input, init);
    if (!observed || !call || !response.ok || response.body === null) return response;
    let snapshot: SnapshotContent;
    try {
      snapshot = snapshotFromRequest(observed.call.api, JSON.parse(observed.body), observed.call.model === undefined ? {} : { model: observed.call.model });
    } catch (error) {
      report(error);
      return response;
    }
    // A clone reads a copy: the caller's response keeps its url, type and stream, untouched.
    const copy = response.clone().body!;
    const sse = (response.headers.get('content-type') ?? '').toLowerCase().startsWith('text/event-stream');
    const turn = {
      requestId: options.requestId?.() ?? crypto.randomUUID(),
      sessionId: pick(options.sessionId, call, 'default'),
      agentId: pick(options.agentId, call, 'main'),
      ts: startMs,
      provider: observed.provider,
      snapshot,
    };
    const judged = read(copy, sse, options.responseLimit ?? 16 * 1024 * 1024, startMs)
      .then(({ value, endMs, ttftMs }) => {
        const completed: CompletedRequest = { ...turn, endTs: endMs, usage: usageFromResponse(turn.provider, value) };
        if (ttftMs !== undefined) completed.ttftMs = ttftMs;
        const evaluation = detector.observe(completed);
        options.sink?.send(toWireEvent(completedEvent(completed)));
        if (evaluation) options.onTurn?.(evaluation, completed);
      })
      .catch(report)
      .finally(() => reading.delete(judged));
    reading.add(judged);
    return response;
  };
  const idle = async () => {
    while (reading.size > 0) await Promise.all(reading);
  };
  return Object.assign(wrapped, { idle }) as unknown as CachebreakFetch<F>;
}

/** Reads a copy of the response to its end: the usage-carrying value, and when its first byte and end came. */
async function read(body: ReadableStream<Uint8Array>, sse: boolean, limit: number, startMs: number) {
  const text = new UsageText(sse, limit);
  const decoder = new TextDecoder();
  let ttftMs: number | undefined;
  const reader = body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (sse && ttftMs === undefined) ttftMs = Date.now() - startMs;
    text.push(decoder.decode(value, { stream: true }));
  }
  text.push(decoder.decode());
  const value = text.end();
  if (value === undefined) throw new Error(`response: ${text.failure ?? 'no usage'}`);
  return { value, endMs: Date.now(), ttftMs };
}
