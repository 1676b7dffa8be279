// Anthropic Messages: POST /v1/messages, JSON or SSE (stream: true).
import type { ProviderApi } from './api.js';

export const anthropicApi: ProviderApi = {
  provider: 'anthropic',
  prefix: '/anthropic',
  observed: (method, path) => (method === 'POST' && path.endsWith('/v1/messages') ? { api: 'anthropic' } : undefined),
};
