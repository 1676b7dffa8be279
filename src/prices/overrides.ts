// The prices a config file gives (--prices): by model id or id prefix, won
// over the database. Two forms: absolute USD per million tokens, and the
// older input price with multipliers, still read so existing files work.
import type { ModelPrice, PriceLookup } from '../core/prices.js';
import { memoised } from './memo.js';

/** Model id or id prefix → price, as the file gave the keys. */
export type PriceOverrides = Readonly<Record<string, ModelPrice>>;

/** What is wrong with an overrides object; the message names the model key and the field. */
export class PriceOverrideError extends Error {}

const ABSOLUTE = ['input', 'cacheRead', 'cacheWrite', 'cacheWrite1h'] as const;
const MULTIPLIERS = ['inputUsdPerMTok', 'readMultiplier', 'write5mMultiplier', 'write1hMultiplier'] as const;

/** The older form's defaults: Anthropic's multipliers. */
const DEFAULT_MULTIPLIERS = { readMultiplier: 0.1, write5mMultiplier: 1.25, write1hMultiplier: 2 } as const;

const EXAMPLE = '{"input": 3, "cacheRead": 0.3, "cacheWrite": 3.75, "cacheWrite1h": 6}';

/**
 * Bedrock ("us.anthropic.claude-…-v1:0", "global.anthropic.…"), OpenRouter
 * ("anthropic/claude-…") and Gemini ("models/gemini-…") decorate the same
 * model ids: the id without them, lower-cased.
 */
export function bareModelId(model: string): string {
  const lower = model.trim().toLowerCase();
  const afterSlash = lower.slice(lower.lastIndexOf('/') + 1);
  return afterSlash.replace(/^(?:(?:[a-z]{2}|apac|global)\.)?(?:anthropic|amazon|meta|mistral|deepseek|qwen)\./, '');
}

function quoted(value: unknown): string {
  return value === undefined ? 'nothing' : JSON.stringify(value);
}

function amount(entry: Record<string, unknown>, model: string, field: string): number | undefined {
  const value = entry[field];
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw new PriceOverrideError(`model "${model}": ${field} must be a non-negative number, got ${quoted(value)}`);
  }
  return value;
}

function priceOf(model: string, value: unknown): ModelPrice {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new PriceOverrideError(`model "${model}": expected a price such as ${EXAMPLE} (USD per million tokens), got ${quoted(value)}`);
  }
  const entry = value as Record<string, unknown>;
  const fields = Object.keys(entry);
  const unknown = fields.find((field) => !(ABSOLUTE as readonly string[]).includes(field) && !(MULTIPLIERS as readonly string[]).includes(field));
  if (unknown !== undefined) {
    throw new PriceOverrideError(
      `model "${model}": unknown field "${unknown}"; expected ${ABSOLUTE.join(', ')} (USD per million tokens), or the older ${MULTIPLIERS.join(', ')}`,
    );
  }
  const absolute = fields.filter((field) => (ABSOLUTE as readonly string[]).includes(field));
  const multiplied = fields.filter((field) => (MULTIPLIERS as readonly string[]).includes(field));
  if (absolute.length > 0 && multiplied.length > 0) {
    throw new PriceOverrideError(`model "${model}": mixes ${absolute[0]} with ${multiplied[0]}; give either ${ABSOLUTE.join(', ')} or ${MULTIPLIERS.join(', ')}`);
  }
  if (multiplied.length > 0) {
    const input = amount(entry, model, 'inputUsdPerMTok');
    if (input === undefined) throw new PriceOverrideError(`model "${model}": inputUsdPerMTok is missing (USD per million input tokens)`);
    // 12 significant digits: 7 × 0.1 is 0.7, not 0.7000000000000001.
    const times = (field: keyof typeof DEFAULT_MULTIPLIERS) => Number((input * (amount(entry, model, field) ?? DEFAULT_MULTIPLIERS[field])).toPrecision(12));
    return Object.freeze({ input, cacheRead: times('readMultiplier'), cacheWrite: times('write5mMultiplier'), cacheWrite1h: times('write1hMultiplier') });
  }
  const input = amount(entry, model, 'input');
  if (input === undefined) throw new PriceOverrideError(`model "${model}": input is missing (USD per million input tokens), as in ${EXAMPLE}`);
  const cacheWrite = amount(entry, model, 'cacheWrite') ?? input;
  return Object.freeze({
    input,
    // Missing prices as the database's: no read discount, writes at input, 1h writes as 5m.
    cacheRead: amount(entry, model, 'cacheRead') ?? input,
    cacheWrite,
    cacheWrite1h: amount(entry, model, 'cacheWrite1h') ?? cacheWrite,
  });
}

/** Reads a parsed overrides file: an object of model id or id prefix → price. Throws PriceOverrideError. */
export function parsePriceOverrides(json: unknown): PriceOverrides {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    throw new PriceOverrideError(`expected an object of model id (or id prefix) → price, such as {"acme-coder": ${EXAMPLE}}`);
  }
  const overrides: Record<string, ModelPrice> = {};
  const keyOf = new Map<string, string>();
  for (const [model, value] of Object.entries(json)) {
    const bare = bareModelId(model);
    if (bare === '') throw new PriceOverrideError(`model "${model}": names no model once lower-cased and stripped of provider decorations`);
    const earlier = keyOf.get(bare);
    if (earlier !== undefined) throw new PriceOverrideError(`model "${model}": the same model as "${earlier}" (both are "${bare}"); keep one`);
    keyOf.set(bare, model);
    overrides[model] = priceOf(model, value);
  }
  return Object.freeze(overrides);
}

/** The override whose key is the longest prefix of the model's bare id, if any. */
function overrideFinder(overrides: PriceOverrides): (model: string) => ModelPrice | undefined {
  const entries = Object.entries(overrides)
    .map(([key, price]) => [bareModelId(key), price] as const)
    .sort(([a], [b]) => b.length - a.length);
  return (model) => {
    const id = bareModelId(model);
    return entries.find(([key]) => id.startsWith(key))?.[1];
  };
}

/** The overrides, and for every model they do not cover, `fallback`. */
export function withOverrides(overrides: PriceOverrides, fallback: PriceLookup): PriceLookup {
  if (Object.keys(overrides).length === 0) return fallback;
  const find = overrideFinder(overrides);
  return memoised((model, provider) => find(model) ?? fallback(model, provider));
}
