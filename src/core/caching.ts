// SPEC §4.3 and §4.12: how a provider caches. Explicit caching reports what
// it wrote; automatic caching reports no write, and caches the whole prompt
// once it reaches the provider's minimum. This table is the one source of
// the minimums and retention windows; docs/how-it-decides.md's table is generated from it.
import { modelFamily } from './family.js';
import { resolveProvider, type ProviderName } from './usage.js';
import type { Usage } from './types.js';

export type CachingMode = 'explicit' | 'automatic';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

/** How long an automatic cache keeps a prompt: at least `minMs`, at most `maxMs` (null: no upper bound). */
export interface Window {
  minMs: number;
  maxMs: number | null;
  /** The window follows the retention the request asked for. */
  declared?: boolean;
}

export interface AutomaticCaching {
  /** Who this row is about, for the docs. */
  readonly label: string;
  /** Prompts shorter than this are not cached. */
  readonly minTokens: (family: string) => number;
  /** Retention; undefined: unknown (the provider does not say). `declaredTtlMs` is the retention the request asked for. */
  readonly window: (family: string, declaredTtlMs: number | undefined) => Window | undefined;
  /** The window as the docs state it. */
  readonly retention: string;
}

const flat = (tokens: number) => () => tokens;

/** gpt-5.6 and later keep a prompt at least 30 minutes. */
const GUARANTEES_30M = /^gpt-(?:5\.(?:[6-9]|\d{2,})|[6-9])/;

const OPENAI: AutomaticCaching = {
  label: 'OpenAI (chat, Responses), Azure OpenAI, xAI',
  minTokens: flat(1024),
  window: (family, declared) => {
    const minMs = GUARANTEES_30M.test(family) ? 30 * MINUTE : 5 * MINUTE;
    if (declared !== undefined && declared >= 24 * HOUR) return { minMs, maxMs: 24 * HOUR, declared: true };
    return { minMs, maxMs: HOUR };
  },
  retention: '5 min to 1 h in memory (30 min minimum on gpt-5.6 and later); up to 24 h when the request asks for 24 h retention',
};

const UNKNOWN_RETENTION = () => undefined;

/** SPEC §4.3 and §4.5: by provider; any other or unknown provider is `other`. */
export const AUTOMATIC_CACHING: Readonly<Record<Exclude<ProviderName, 'anthropic' | 'bedrock'> | 'other', AutomaticCaching>> = {
  openai: OPENAI,
  xai: OPENAI,
  gemini: {
    label: 'Gemini, Vertex AI (implicit caching)',
    minTokens: (family) => (/^gemini-.*pro/.test(family) ? 2048 : 1024),
    window: UNKNOWN_RETENTION,
    retention: 'unknown',
  },
  dashscope: { label: 'DashScope (implicit caching)', minTokens: flat(1024), window: UNKNOWN_RETENTION, retention: 'unknown' },
  deepseek: {
    label: 'DeepSeek',
    minTokens: flat(64),
    window: () => ({ minMs: HOUR, maxMs: null }),
    retention: '1 h to days, best effort (never judged expired)',
  },
  openrouter: { label: 'OpenRouter without a write count', minTokens: flat(1024), window: UNKNOWN_RETENTION, retention: 'unknown' },
  other: { label: 'any other or unknown provider', minTokens: flat(1024), window: UNKNOWN_RETENTION, retention: 'unknown' },
};

/** Providers whose usage is explicit caching even when it carries no write field. */
const EXPLICIT_PROVIDERS: ReadonlySet<ProviderName> = new Set(['anthropic', 'bedrock']);

/** SPEC §4.12: a write field, even 0, or Anthropic's or Bedrock's usage, is explicit caching. */
export function cachingMode(usage: Usage, provider: string | undefined): CachingMode {
  if (usage.writeReported) return 'explicit';
  const known = provider === undefined ? undefined : resolveProvider(provider);
  return known !== undefined && EXPLICIT_PROVIDERS.has(known) ? 'explicit' : 'automatic';
}

export function automaticCaching(provider: string | undefined): AutomaticCaching {
  const known = provider === undefined ? undefined : resolveProvider(provider);
  if (known === undefined || EXPLICIT_PROVIDERS.has(known)) return AUTOMATIC_CACHING.other;
  return AUTOMATIC_CACHING[known as keyof typeof AUTOMATIC_CACHING];
}

/** The key a minimum is overridden under in the options: the provider's canonical name, or "other". */
export function minimumKey(provider: string | undefined): string {
  const known = provider === undefined ? undefined : resolveProvider(provider);
  return known === undefined || EXPLICIT_PROVIDERS.has(known) ? 'other' : known;
}

/** The shortest prompt an automatic cache keeps, with the options' overrides by provider. */
export function minCacheable(
  provider: string | undefined,
  model: string | undefined,
  overrides: Readonly<Record<string, number>>,
): number {
  return overrides[minimumKey(provider)] ?? automaticCaching(provider).minTokens(model === undefined ? '' : modelFamily(model));
}
