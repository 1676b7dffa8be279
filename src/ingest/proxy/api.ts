// What the proxy needs to know of each provider API it fronts: the path
// prefix clients are pointed at, and which requests carry a cacheable prompt
// whose response reports usage (those are observed; every other request is
// forwarded untouched and not looked at).
import type { RequestApi } from '../../core/snapshot/index.js';

export type ProxyProvider = 'anthropic' | 'openai' | 'gemini';

export interface ObservedCall {
  api: RequestApi;
  /** The model, when the URL names it (Gemini). */
  model?: string;
}

export interface ProviderApi {
  provider: ProxyProvider;
  /** "/anthropic": a request to /anthropic/v1/messages goes to the upstream's /v1/messages. */
  prefix: string;
  /** The call a request makes, when it is one that is observed; `path` is after the prefix, without the query. */
  observed(method: string, path: string): ObservedCall | undefined;
  /** The id an answer names its call by (what ResponseReader found of it), when the API gives one in the body; else the upstream's request-id header is used. */
  requestIdOf?(answer: unknown): string | undefined;
}
