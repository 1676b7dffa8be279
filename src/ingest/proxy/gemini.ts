// Gemini API: POST /v1beta/models/{model}:generateContent, and
// :streamGenerateContent (SSE with alt=sse, else one JSON array). The model is
// named in the URL, not in the body.
import type { ProviderApi } from './api.js';

const CALL = /\/models\/([^/:]+):(?:generateContent|streamGenerateContent)$/;

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
};
