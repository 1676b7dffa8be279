// What a harness has in hand around one model call, read the way the server
// reads it: the request body → its snapshot (core/snapshot), the response →
// its usage (core/usage, core/sse). Nothing of the content is kept.
import { UsageText } from '../core/sse.js';
import { buildSnapshot, detectRequestApi, REQUEST_APIS, SnapshotError, type RequestApi } from '../core/snapshot/index.js';
import type { SnapshotContent, Usage } from '../core/types.js';
import { normalizeUsage } from '../core/usage.js';

/** A provider name, or the request API itself when one provider speaks several. */
export type RequestProvider = RequestApi | 'openai' | (string & {});

/** A response that cannot be read for usage; `field` is a path into it. */
export class UsageError extends Error {
  /** Where in the response, e.g. `response.usage.prompt_tokens`. */
  readonly field: string;

  constructor(field: string, problem: string) {
    super(`${field}: ${problem}`);
    this.name = 'UsageError';
    this.field = field;
  }
}

export interface SnapshotFromRequestOptions {
  /** The model, when the URL names it rather than the body (Gemini, Bedrock). */
  model?: string;
}

function apiOf(provider: string, body: unknown): RequestApi | undefined {
  if ((REQUEST_APIS as readonly string[]).includes(provider)) return provider as RequestApi;
  if (provider === 'gemini' || provider === 'vertex') return 'gemini';
  if (provider === 'bedrock') return 'bedrock';
  // OpenAI and the compatible gateways speak Chat Completions or Responses: the body says which.
  return detectRequestApi(body);
}

/**
 * The snapshot of a raw request body, as sent to `provider` ("anthropic",
 * "openai", "openai-chat", "openai-responses", "gemini", "bedrock"; any other
 * name: detected from the body's shape). Throws SnapshotError, naming the
 * field, when the body cannot be read.
 */
export function snapshotFromRequest(provider: RequestProvider, body: unknown, options: SnapshotFromRequestOptions = {}): SnapshotContent {
  const api = apiOf(provider, body);
  if (api === undefined) throw new SnapshotError('body', `cannot tell which API the request to "${provider}" is for; pass one of ${REQUEST_APIS.join(', ')}`);
  const built = buildSnapshot(body, api, options.model === undefined ? {} : { model: options.model });
  if (!built.ok) throw new SnapshotError(built.field, built.error.replace(/^[^:]*: /, ''));
  return built.snapshot;
}

/** The usage-carrying value of a response given as text: an event stream's usage events, or a JSON body. */
function fromText(text: string): unknown {
  const sse = /^\s*(?:event|data|id|retry)?:/.test(text) || /^\s*data:/m.test(text);
  const reader = new UsageText(sse, Number.MAX_SAFE_INTEGER);
  reader.push(text);
  const value = reader.end();
  if (value === undefined) throw new UsageError('response', reader.failure ?? 'the event stream carries no usage');
  return value;
}

/**
 * SPEC §3: the usage of a response from `provider`, given as the parsed body
 * (or its `usage` object), an array of parsed stream events, or the raw text
 * of the body or of its event stream. Throws UsageError, naming the field,
 * when no usage can be read.
 */
export function usageFromResponse(provider: string, bodyOrStreamEvents: unknown): Usage {
  const raw = typeof bodyOrStreamEvents === 'string' ? fromText(bodyOrStreamEvents) : bodyOrStreamEvents;
  const result = normalizeUsage(provider, raw);
  // The core names paths from an event's `usage` field; here the root is the response.
  if (!result.ok) throw new UsageError(result.field.replace(/^usage/, 'response'), result.error);
  return result.usage;
}
