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
