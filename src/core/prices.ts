// SPEC §4.7: the extra cost of a break, from a per-model price table.

export interface ModelPrice {
  /** USD per million uncached input tokens. */
  inputUsdPerMTok: number;
  /** Price of a cache read relative to uncached input. */
  readMultiplier: number;
  /** Price of a 5-minute cache write relative to uncached input. */
  write5mMultiplier: number;
  /** Price of a 1-hour cache write relative to uncached input. */
  write1hMultiplier: number;
}

/** Keys are model ids or id prefixes; the longest matching key wins. */
export type PriceTable = Readonly<Record<string, ModelPrice>>;

function anthropic(input: number): ModelPrice {
  return { inputUsdPerMTok: input, readMultiplier: 0.1, write5mMultiplier: 1.25, write1hMultiplier: 2 };
}
/** Providers that bill no separate write: a missed read is paid as plain input. */
function readDiscount(input: number, readMultiplier: number): ModelPrice {
  return { inputUsdPerMTok: input, readMultiplier, write5mMultiplier: 1, write1hMultiplier: 1 };
}

/** List prices, USD per 1M input tokens; extend or override them in the config. */
export const DEFAULT_PRICES: PriceTable = {
  'claude-opus-4': anthropic(15),
  'claude-opus-4-5': anthropic(5),
  'claude-opus-4-6': anthropic(5),
  'claude-sonnet-4': anthropic(3),
  'claude-haiku-4-5': anthropic(1),
  'claude-3-5-haiku': anthropic(0.8),
  'gpt-5': readDiscount(1.25, 0.1),
  'gpt-5-mini': readDiscount(0.25, 0.1),
  'gpt-4.1': readDiscount(2, 0.25),
  'gpt-4o': readDiscount(2.5, 0.5),
  'gemini-2.5-pro': readDiscount(1.25, 0.1),
  'gemini-2.5-flash': readDiscount(0.3, 0.1),
  'qwen3-coder-plus': anthropic(1),
  'qwen-plus': anthropic(0.4),
  'deepseek-chat': readDiscount(0.28, 0.1),
};

/**
 * Bedrock ("us.anthropic.claude-…-v1:0"), OpenRouter ("anthropic/claude-…") and
 * Gemini ("models/gemini-…") decorate the same model ids.
 */
function bareModelId(model: string): string {
  const lower = model.toLowerCase();
  const afterSlash = lower.slice(lower.lastIndexOf('/') + 1);
  return afterSlash.replace(/^([a-z]{2}\.)?(anthropic|amazon|meta|mistral|deepseek|qwen)\./, '');
}

const resolved = new WeakMap<PriceTable, Map<string, ModelPrice | undefined>>();

export function findPrice(table: PriceTable, model: string | undefined | null): ModelPrice | undefined {
  if (!model) return undefined;
  let cache = resolved.get(table);
  if (!cache) resolved.set(table, (cache = new Map()));
  if (cache.has(model)) return cache.get(model);
  const price = lookUp(table, model);
  cache.set(model, price);
  return price;
}

function lookUp(table: PriceTable, model: string): ModelPrice | undefined {
  const id = bareModelId(model);
  let best: string | undefined;
  for (const key of Object.keys(table)) {
    if (id.startsWith(key.toLowerCase()) && (best === undefined || key.length > best.length)) best = key;
  }
  return best === undefined ? undefined : table[best];
}

/**
 * What the missed tokens cost beyond a cache read: the part the turn wrote back
 * at the write price (1h share at the 1h price), the rest at the uncached price.
 */
export function extraCostUsd(
  price: ModelPrice,
  missed: number,
  written: { write: number; write1h: number },
): number {
  const rewritten = Math.min(missed, written.write);
  const rewritten1h = Math.min(rewritten, written.write1h);
  const rewritten5m = rewritten - rewritten1h;
  const uncached = missed - rewritten;
  const tokenCost =
    rewritten5m * (price.write5mMultiplier - price.readMultiplier) +
    rewritten1h * (price.write1hMultiplier - price.readMultiplier) +
    uncached * (1 - price.readMultiplier);
  return Math.round(tokenCost * price.inputUsdPerMTok) / 1_000_000;
}
