// SPEC §4.3, §4.5 and §4.12: how a provider caches. Explicit caching reports
// what it wrote; automatic caching reports no write, and caches the whole
// prompt once it reaches the provider's minimum. Explicit breakpoints differ
// by provider too: how far back a lookup walks, how long an entry is held.
// These tables are the one source of the minimums, retention windows and
// breakpoint rules; docs/how-it-decides.md's tables are generated from them.
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
  /** The minimums as the docs state them. */
  readonly minimum: string;
  /** Retention; undefined: unknown (the provider does not say). `declaredTtlMs` is the retention the request asked for. */
  readonly window: (family: string, declaredTtlMs: number | undefined) => Window | undefined;
  /** The window as the docs state it. */
  readonly retention: string;
}

const flat = (tokens: number) => () => tokens;

/** OpenAI's models, whoever serves them. */
const OPENAI_MODEL = /^(?:gpt-|o\d|chatgpt-|codex-)/;
/** gpt-5.5 and later accept only 24 h retention (`prompt_cache_retention`): every prompt is kept up to 24 h. */
const RETAINS_24H = /^gpt-(?:5\.(?:[5-9]|\d{2,})|[6-9]|\d{2,})/;
/** gpt-5.6 and later keep a prompt at least 30 minutes (`prompt_cache_options.ttl`). */
const GUARANTEES_30M = /^gpt-(?:5\.(?:[6-9]|\d{2,})|[6-9]|\d{2,})/;

const OPENAI: AutomaticCaching = {
  label: 'OpenAI (chat, Responses), Azure OpenAI, xAI',
  minTokens: flat(1024),
  minimum: '1,024 tokens',
  window: (family, declared) => {
    const guaranteed = GUARANTEES_30M.test(family);
    const minMs = guaranteed ? 30 * MINUTE : 5 * MINUTE;
    if (declared !== undefined && declared >= 24 * HOUR) return { minMs, maxMs: 24 * HOUR, declared: true };
    const window: Window = { minMs, maxMs: RETAINS_24H.test(family) ? 24 * HOUR : HOUR };
    // `prompt_cache_options.ttl: "30m"` asks for what gpt-5.6 guarantees.
    if (guaranteed && declared === minMs) window.declared = true;
    return window;
  },
  retention: '5 min to 1 h in memory; gpt-5.5 and later up to 24 h (the only retention they accept), gpt-5.6 and later at least 30 min; up to 24 h on any model whose request asks for 24 h retention',
};

/** Gemini 3 Pro and the 3.5 to 3.9 Flash models cache from 4,096 tokens, the other Pro models from 2,048. */
function geminiMinimum(family: string): number {
  if (/^gemini-3(?:\.\d+)?-pro/.test(family) || /^gemini-3\.[5-9]-flash/.test(family)) return 4096;
  return /^gemini-.*pro/.test(family) ? 2048 : 1024;
}

const UNKNOWN_RETENTION = () => undefined;

/** SPEC §4.3 and §4.5: by provider; any other or unknown provider is `other`. */
export const AUTOMATIC_CACHING: Readonly<Record<Exclude<ProviderName, 'anthropic' | 'bedrock'> | 'other', AutomaticCaching>> = {
  openai: OPENAI,
  xai: OPENAI,
  gemini: {
    label: 'Gemini, Vertex AI (implicit caching)',
    minTokens: geminiMinimum,
    minimum: '1,024 tokens; 2,048 for Pro models; 4,096 for Gemini 3 Pro and 3.5 to 3.9 Flash',
    window: UNKNOWN_RETENTION,
    retention: 'unknown',
  },
  dashscope: { label: 'DashScope (implicit caching)', minTokens: flat(1024), minimum: '1,024 tokens', window: UNKNOWN_RETENTION, retention: 'unknown' },
  deepseek: {
    label: 'DeepSeek',
    minTokens: flat(64),
    minimum: '64 tokens',
    window: () => ({ minMs: HOUR, maxMs: null }),
    retention: '1 h to days, best effort (never judged expired)',
  },
  openrouter: { label: 'OpenRouter without a write count', minTokens: flat(1024), minimum: '1,024 tokens', window: UNKNOWN_RETENTION, retention: 'unknown' },
  other: { label: 'any other or unknown provider', minTokens: flat(1024), minimum: '1,024 tokens', window: UNKNOWN_RETENTION, retention: 'unknown' },
};

/** How explicit breakpoints (cache markers) behave (SPEC §4.12). */
export interface Breakpoints {
  /** Who this row is about, for the docs. */
  readonly label: string;
  /** Content blocks a lookup walks back from a breakpoint to find a cached entry; null: no limit. */
  readonly lookbackBlocks: number | null;
  /** How long an entry is held: the TTL tiers its markers declare, or the provider's automatic-caching window. */
  readonly held: 'tiers' | 'window';
  /** The lookback and retention as the docs state them. */
  readonly lookback: string;
  readonly retention: string;
}

/** Anthropic's rules, which Bedrock, DashScope's explicit cache and gateways in front of them follow. */
const MARKER_TIERS: Breakpoints = {
  label: 'Anthropic, Bedrock, DashScope explicit caching, and gateways in front of them',
  lookbackBlocks: 20,
  held: 'tiers',
  lookback: '20 content blocks',
  retention: '5 min per marker, 1 h for a marker with `ttl: "1h"` (the tiers of the prefix, SPEC §4.5)',
};

const OPENAI_BREAKPOINTS: Breakpoints = {
  label: 'OpenAI models (`prompt_cache_breakpoint`, gpt-5.6 and later), whoever reports their writes',
  lookbackBlocks: null,
  held: 'window',
  lookback: 'no limit (the latest 80 breakpoints are matched)',
  retention: "OpenAI's window above (30 min to 24 h on gpt-5.6 and later), whether or not writes are reported",
};

/** Every row of the breakpoint table, for the docs. */
export const BREAKPOINTS: readonly Breakpoints[] = [MARKER_TIERS, OPENAI_BREAKPOINTS];

/** The breakpoint rules of a model: an OpenAI model's are OpenAI's, whichever gateway serves it; any other follows Anthropic's. */
export function breakpointsOf(model: string | undefined): Breakpoints {
  return model !== undefined && OPENAI_MODEL.test(modelFamily(model)) ? OPENAI_BREAKPOINTS : MARKER_TIERS;
}

/**
 * Which thinking blocks of earlier turns a Claude model keeps in its prompt
 * (SPEC §4.12). A turn starts with a user message that is more than tool
 * results. The models listed keep only the current turn's thinking: once a
 * turn starts, the API strips the thinking blocks of every assistant message
 * before it, so the prompt the model sees and caches no longer holds them.
 * Opus 4.5, Sonnet 4.6, Haiku 5.5 and later, Fable and Mythos keep every
 * thinking block, as does any model not listed (OpenRouter spells versions
 * with a dot).
 */
export const EARLIER_THINKING = {
  strippedBy: /^claude-(?:3[-.]|opus-4(?:[-.][01])?$|sonnet-4(?:[-.][0-5])?$|haiku-4(?:[-.][0-5])?$)/,
  stripped: 'Claude 3.x, Opus 4 and 4.1, Sonnet 4 and 4.5, Haiku 4.5 and earlier',
  kept: 'Opus 4.5, Sonnet 4.6, Haiku 5.5 and later, Fable, Mythos and any other model',
} as const;

/** Whether the API strips the thinking blocks of a model's earlier turns from its prompt. */
export function stripsEarlierThinking(model: string): boolean {
  return EARLIER_THINKING.strippedBy.test(modelFamily(model));
}

/** Providers whose usage is explicit caching even when it carries no write field. */
const EXPLICIT_PROVIDERS: ReadonlySet<ProviderName> = new Set(['anthropic', 'bedrock']);

/** SPEC §4.12: a write field, even 0, or Anthropic's or Bedrock's usage, is explicit caching. */
export function cachingMode(usage: Usage, provider: string | undefined): CachingMode {
  if (usage.writeReported) return 'explicit';
  const known = provider === undefined ? undefined : resolveProvider(provider);
  return known !== undefined && EXPLICIT_PROVIDERS.has(known) ? 'explicit' : 'automatic';
}

/** Claude models cache only what is marked, whoever serves them. */
const CLAUDE_MODEL = /^claude-/;

/**
 * How a break's missed tokens were paid (SPEC §4.10): as detection judges the
 * usage, except that a Claude model's prompt is written, not cached
 * automatically, even through a gateway (OpenRouter) that reports no write.
 */
export function pricingMode(usage: Usage, provider: string | undefined, model: string | undefined): CachingMode {
  const mode = cachingMode(usage, provider);
  return mode === 'automatic' && model !== undefined && CLAUDE_MODEL.test(modelFamily(model)) ? 'explicit' : mode;
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

/**
 * A minimum override's model part: a model (compared by family), or the
 * start of a family followed by `*`. Returns the form it is matched in, or
 * undefined when it is neither.
 */
export function modelPattern(text: string): string | undefined {
  const lower = text.trim().toLowerCase();
  if (!/^[a-z0-9][a-z0-9._:@-]*\*?$/.test(lower)) return undefined;
  return lower.endsWith('*') ? lower : modelFamily(lower);
}

/** Per-model overrides ("gemini/gemini-3-pro*") by provider key, most specific first: read once per options object. */
const modelOverrides = new WeakMap<Readonly<Record<string, number>>, Map<string, { pattern: string; tokens: number }[]>>();

function overridesByModel(overrides: Readonly<Record<string, number>>): Map<string, { pattern: string; tokens: number }[]> {
  let byProvider = modelOverrides.get(overrides);
  if (byProvider === undefined) {
    byProvider = new Map();
    for (const [key, tokens] of Object.entries(overrides)) {
      const slash = key.indexOf('/');
      const pattern = slash < 0 ? undefined : modelPattern(key.slice(slash + 1));
      if (pattern === undefined) continue;
      const provider = key.slice(0, slash).trim().toLowerCase();
      const list = byProvider.get(provider) ?? [];
      list.push({ pattern, tokens });
      byProvider.set(provider, list);
    }
    // A longer pattern is more specific; at one length, a whole name beats a name's start.
    for (const list of byProvider.values()) list.sort((a, b) => b.pattern.length - a.pattern.length || Number(a.pattern.endsWith('*')) - Number(b.pattern.endsWith('*')));
    modelOverrides.set(overrides, byProvider);
  }
  return byProvider;
}

function matches(pattern: string, family: string): boolean {
  return pattern.endsWith('*') ? family.startsWith(pattern.slice(0, -1)) : family === pattern;
}

/**
 * The shortest prompt an automatic cache keeps, with the options' overrides:
 * by model ("openai/gpt-4o", "gemini/gemini-3-pro*"), the most specific
 * first, else by provider ("openai"), else the table's.
 */
export function minCacheable(
  provider: string | undefined,
  model: string | undefined,
  overrides: Readonly<Record<string, number>>,
): number {
  const key = minimumKey(provider);
  const family = model === undefined ? '' : modelFamily(model);
  const byModel = overridesByModel(overrides).get(key)?.find((o) => matches(o.pattern, family));
  return byModel?.tokens ?? overrides[key] ?? automaticCaching(provider).minTokens(family);
}
