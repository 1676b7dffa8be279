// Gemini API: POST /v1beta/models/{model}:generateContent, and
// :streamGenerateContent (SSE with alt=sse, else one JSON array). The model is
// named in the URL, not in the body. A call's request id is its answer's
// `responseId` (every chunk of a stream names the same one), the id Gemini
// CLI's telemetry names the call by (`gen_ai.response.id`), so that its OTLP
// and the proxy make one turn of the call.
import type { ProviderApi } from './api.js';

const CALL = /\/models\/([^/:]+):(?:generateContent|streamGenerateContent)$/;

/** The `responseId` of a Gemini answer as ResponseReader found it (a response, or a stream's chunks); undefined: none. */
export function geminiResponseId(answer: unknown): string | undefined {
  for (const chunk of Array.isArray(answer) ? answer : [answer]) {
    const id: unknown = typeof chunk === 'object' && chunk !== null ? (chunk as { responseId?: unknown }).responseId : undefined;
    if (typeof id === 'string' && id !== '') return id;
  }
  return undefined;
}

export const geminiApi: ProviderApi = {
  provider: 'gemini',
  prefix: '/gemini',
  observed(method, path) {
    const match = method === 'POST' ? CALL.exec(path) : null;
    if (!match) return undefined;
    try {
      return { api: 'gemini', model: decodeURIComponent(match[1]!) };
    } catch {
      return { api: 'gemini' };
    }
  },
  requestIdOf: geminiResponseId,
};
