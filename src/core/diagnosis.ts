// The provider's own diagnosis of a cache miss, found in a response as the
// provider returned it: Anthropic's cache diagnostics (beta
// cache-diagnosis-2026-04-07: `diagnostics.cache_miss_reason`, with
// `cache_missed_input_tokens`) and OpenAI's prompt cache diagnostics
// (Responses, gpt-5.6 and later: `prompt_cache_diagnostics`, type
// `cache_miss` with `reason` and `cache_missed_tokens`). What it means is
// verdicts.ts's to say; this module only finds it and its missed tokens.

/** Where a diagnosis sits on a response: Anthropic's key, OpenAI's key. */
const KEYS = ['diagnostics', 'prompt_cache_diagnostics'] as const;
/** Keys that lead from a stream event to the response it describes (Anthropic message_start, OpenAI response.completed). */
const WRAPPERS = ['message', 'response'] as const;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Identifier-like text (a reason, a type, an id): anything else could be content, and is left out. */
const WORD = /^[\w.:-]{1,100}$/;

/** The diagnosis's numbers, flags and identifier-like strings, two levels deep: never text a provider might echo. */
function kept(value: Record<string, unknown>, depth = 0): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    if (typeof v === 'number' || typeof v === 'boolean' || (typeof v === 'string' && WORD.test(v))) out[key] = v;
    else if (isObject(v) && depth < 1) out[key] = kept(v, depth + 1);
  }
  return out;
}

function foundIn(value: unknown): Record<string, unknown> | undefined {
  for (let depth = 0; depth < 2 && isObject(value); depth++) {
    const obj = value;
    const key = KEYS.find((k) => isObject(obj[k]));
    if (key !== undefined) return { [key]: kept(obj[key] as Record<string, unknown>) };
    value = WRAPPERS.map((k) => obj[k]).find(isObject);
  }
  return undefined;
}

/**
 * The diagnosis a response carries, under the key the provider used
 * ({diagnostics: …} or {prompt_cache_diagnostics: …}), its numbers and
 * identifier-like strings only; in a stream, the last event's that has one.
 * Undefined when it has none.
 */
export function diagnosisIn(raw: unknown): Record<string, unknown> | undefined {
  if (!Array.isArray(raw)) return foundIn(raw);
  for (let i = raw.length - 1; i >= 0; i--) {
    const found = foundIn(raw[i]);
    if (found !== undefined) return found;
  }
  return undefined;
}

/**
 * The provider's reason as it names it and the input tokens it says the miss
 * cost, from a diagnosis as stored (diagnosisIn's, or as a client sent it:
 * Anthropic's diagnostics, its cache_miss_reason, the bare type; OpenAI's
 * prompt_cache_diagnostics). Null when it names no reason.
 */
export function providerReason(diagnosis: unknown): { provider: 'anthropic' | 'openai'; reason: string; missedTokens: number | null } | null {
  let value: unknown = diagnosis;
  if (isObject(value) && isObject(value.prompt_cache_diagnostics)) value = value.prompt_cache_diagnostics;
  if (isObject(value) && typeof value.reason === 'string' && (value.type === 'cache_miss' || value.type === undefined)) {
    const missed = value.cache_missed_tokens;
    return { provider: 'openai', reason: value.reason, missedTokens: typeof missed === 'number' ? missed : null };
  }
  if (isObject(value) && isObject(value.diagnostics)) value = value.diagnostics;
  if (isObject(value) && value.cache_miss_reason !== undefined) value = value.cache_miss_reason;
  const type = isObject(value) ? value.type : value;
  if (typeof type !== 'string') return null;
  const missed = isObject(value) ? value.cache_missed_input_tokens : undefined;
  return { provider: 'anthropic', reason: type, missedTokens: typeof missed === 'number' ? missed : null };
}
