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

/** A reason or a type as providers name them: anything else could be content, and is left out. */
const NAME = /^[a-z][a-z0-9_]{0,63}$/;
const nameOf = (value: unknown) => (typeof value === 'string' && NAME.test(value) ? value : undefined);
const countOf = (value: unknown) => (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : undefined);

/** Anthropic's diagnosis, its cache_miss_reason or the bare type → {diagnostics: {cache_miss_reason: {type, cache_missed_input_tokens?}}}. */
function anthropic(value: unknown): Record<string, unknown> | undefined {
  if (isObject(value) && isObject(value.diagnostics)) value = value.diagnostics;
  if (isObject(value) && value.cache_miss_reason !== undefined) value = value.cache_miss_reason;
  const type = nameOf(isObject(value) ? value.type : value);
  if (type === undefined) return undefined;
  const missed = isObject(value) ? countOf(value.cache_missed_input_tokens) : undefined;
  return { diagnostics: { cache_miss_reason: { type, ...(missed === undefined ? {} : { cache_missed_input_tokens: missed }) } } };
}

/** OpenAI's prompt_cache_diagnostics → its type, reason and token counts. */
function openai(value: Record<string, unknown>): Record<string, unknown> | undefined {
  const out: Record<string, unknown> = {};
  for (const key of ['type', 'reason']) if (nameOf(value[key]) !== undefined) out[key] = value[key];
  for (const key of ['cache_missed_tokens', 'comparison_reusable_tokens']) if (countOf(value[key]) !== undefined) out[key] = value[key];
  return Object.keys(out).length === 0 ? undefined : { prompt_cache_diagnostics: out };
}

/**
 * A diagnosis as it is kept: only the fields that name a reason (a lowercase
 * name) or count tokens, under the provider's key; never a key or a text the
 * provider or a client might have filled with content. Undefined when nothing
 * is left.
 */
export function keptDiagnosis(value: unknown): Record<string, unknown> | undefined {
  if (isObject(value) && isObject(value.prompt_cache_diagnostics)) return openai(value.prompt_cache_diagnostics);
  return anthropic(value);
}

function foundIn(value: unknown): Record<string, unknown> | undefined {
  for (let depth = 0; depth < 2 && isObject(value); depth++) {
    const obj = value;
    const key = KEYS.find((k) => isObject(obj[k]));
    if (key !== undefined) return keptDiagnosis({ [key]: obj[key] });
    value = WRAPPERS.map((k) => obj[k]).find(isObject);
  }
  return undefined;
}

/**
 * The diagnosis a response carries, under the key the provider used
 * ({diagnostics: …} or {prompt_cache_diagnostics: …}), as keptDiagnosis keeps
 * it; in a stream, the last event's that has one.
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
  if (isObject(value) && isObject(value.prompt_cache_diagnostics)) {
    // OpenAI's, whatever it says: a hit or a miss without a reason is no reason, never Anthropic's.
    const openaiValue = value.prompt_cache_diagnostics;
    if (typeof openaiValue.reason !== 'string' || (openaiValue.type !== 'cache_miss' && openaiValue.type !== undefined)) return null;
    const missed = openaiValue.cache_missed_tokens;
    return { provider: 'openai', reason: openaiValue.reason, missedTokens: typeof missed === 'number' ? missed : null };
  }
  if (isObject(value) && isObject(value.diagnostics)) value = value.diagnostics;
  if (isObject(value) && value.cache_miss_reason !== undefined) value = value.cache_miss_reason;
  const type = isObject(value) ? value.type : value;
  if (typeof type !== 'string') return null;
  const missed = isObject(value) ? value.cache_missed_input_tokens : undefined;
  return { provider: 'anthropic', reason: type, missedTokens: typeof missed === 'number' ? missed : null };
}
