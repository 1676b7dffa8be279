// SPEC §4.10: model prices from @pydantic/genai-prices, a maintained price
// database, as the core's PriceLookup. It lives outside src/core, which has
// no dependencies and carries no price data.
import { calcPrice, findProvider, type ModelPrice as DatabasePrice, type PriceOptions, type TieredPrices } from '@pydantic/genai-prices';
import type { ModelPrice, PriceLookup } from '../core/prices.js';
import { resolveProvider, type ProviderName } from '../core/usage.js';
import { memoised } from './memo.js';

/** genai-prices' provider id for each of cachebreak's providers. DashScope has none: its models are looked up by id alone. */
export const DATABASE_PROVIDER_IDS: Readonly<Record<ProviderName, string | undefined>> = Object.freeze({
  anthropic: 'anthropic',
  bedrock: 'aws',
  openai: 'openai',
  openrouter: 'openrouter',
  xai: 'x-ai',
  dashscope: undefined,
  gemini: 'google',
  deepseek: 'deepseek',
});

/**
 * The genai-prices provider to look a model up under: ours mapped, any other
 * name as genai-prices knows it (e.g. "mistral"), else none.
 */
export function databaseProviderId(provider: string | undefined): string | undefined {
  if (provider === undefined || provider.trim() === '') return undefined;
  const known = resolveProvider(provider);
  if (known !== undefined) return DATABASE_PROVIDER_IDS[known];
  return findProvider({ providerId: provider.trim().toLowerCase() })?.id;
}

/** USD per million tokens; a tiered price (e.g. above 200k prompt tokens) counts at its base tier. */
function perMTok(value: DatabasePrice[string]): number | undefined {
  const usd = typeof value === 'number' ? value : (value as TieredPrices | undefined)?.base;
  return typeof usd === 'number' && Number.isFinite(usd) && usd >= 0 ? usd : undefined;
}

/**
 * A database price as the core's. No input price (audio, image models): no
 * price. No cache-read price: reads cost as input (no discount). No
 * cache-write price: writes cost as input. No 1h write price: as a 5m write.
 */
export function fromDatabasePrice(price: DatabasePrice): ModelPrice | undefined {
  const input = perMTok(price.input_mtok);
  if (input === undefined) return undefined;
  const cacheWrite = perMTok(price.cache_write_mtok) ?? input;
  return Object.freeze({
    input,
    cacheRead: perMTok(price.cache_read_mtok) ?? input,
    cacheWrite,
    cacheWrite1h: perMTok(price.cache_write_1h_mtok) ?? cacheWrite,
  });
}

/** Every half hour of a day: price windows (peak, off-peak) start on the hour or the half hour. */
const DAY_SAMPLES = Array.from({ length: 48 }, (_, i) => i * 30 * 60_000);

/**
 * The model's list price today. Some providers price by the time of day
 * (DeepSeek's off-peak discount); a turn's cost is told at the day's highest
 * rate, so the same turn costs the same whenever it is priced.
 */
function ask(model: string, options: PriceOptions): ModelPrice | undefined {
  const midnight = Math.floor(Date.now() / 86_400_000) * 86_400_000;
  let highest: ModelPrice | undefined;
  for (const offset of DAY_SAMPLES) {
    let found: ReturnType<typeof calcPrice>;
    try {
      // No usage: only the model's prices are wanted.
      found = calcPrice({}, model, { ...options, timestamp: new Date(midnight + offset) });
    } catch {
      // A model id from the wire must never stop detection.
      return undefined;
    }
    if (!found) return undefined;
    // One price all day: no window to look through.
    if (!Array.isArray(found.model.prices)) return fromDatabasePrice(found.model_price);
    const price = fromDatabasePrice(found.model_price);
    if (price !== undefined && (highest === undefined || price.input > highest.input)) highest = price;
  }
  return highest;
}

/** Gemini's REST ids carry a "models/" path. */
const GEMINI_PATH = /^models\//i;

function lookUp(model: string, provider: string | undefined): ModelPrice | undefined {
  const providerId = databaseProviderId(provider);
  const ids = GEMINI_PATH.test(model) ? [model, model.replace(GEMINI_PATH, '')] : [model];
  // The provider's own price first (Bedrock's differ from Anthropic's), then any provider's.
  const attempts: PriceOptions[] = providerId === undefined ? [{}] : [{ providerId }, {}];
  for (const options of attempts) {
    for (const id of ids) {
      const price = ask(id, options);
      if (price !== undefined) return price;
    }
  }
  return undefined;
}

/** Prices from the genai-prices database bundled with the package; undefined for a model it does not know. */
export const databasePrices: PriceLookup = memoised(lookUp);
