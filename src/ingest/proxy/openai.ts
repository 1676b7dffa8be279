// OpenAI Chat Completions and Responses, JSON or SSE. Clients point their base
// URL at /openai/v1, so paths arrive as /v1/chat/completions and /v1/responses
// (a compatible gateway may put its own segments before them).
import type { ProviderApi } from './api.js';

export const openaiApi: ProviderApi = {
  provider: 'openai',
  prefix: '/openai',
  observed(method, path) {
    if (method !== 'POST') return undefined;
    if (path.endsWith('/chat/completions')) return { api: 'openai-chat' };
    if (path.endsWith('/responses')) return { api: 'openai-responses' };
    return undefined;
  },
};

/** Where a call stands in a chain of stored responses (OpenAI Responses): the response it goes on from, and its own. */
export interface ResponseChain {
  previous?: string;
  response?: string;
}

const stringAt = (value: unknown, key: string): string | undefined => {
  const found = typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined;
  return typeof found === 'string' && found !== '' ? found : undefined;
};

/**
 * A Responses call's place in its chain of stored responses: the response
 * its body goes on from (`previous_response_id`), and its answer's own `id`
 * (a response object, or, streamed, the response of its last usage event).
 */
export function responsesChain(body: unknown, answer: unknown): ResponseChain {
  const chain: ResponseChain = {};
  const previous = stringAt(body, 'previous_response_id');
  if (previous !== undefined) chain.previous = previous;
  const last: unknown = Array.isArray(answer) ? answer.at(-1) : answer;
  const response = stringAt(last, 'object') === 'response' ? stringAt(last, 'id') : stringAt((last as { response?: unknown } | undefined)?.response, 'id');
  if (response !== undefined) chain.response = response;
  return chain;
}
