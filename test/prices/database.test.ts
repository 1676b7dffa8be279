// The genai-prices database as detection's PriceLookup: the ids and provider
// names that reach it from the wire, priced as the database prices them
// (pinned to @pydantic/genai-prices 0.1.8), and nothing priced that it does
// not know.
import { calcPrice, findProvider } from '@pydantic/genai-prices';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { PROVIDERS } from '../../src/core/usage.js';
import { DATABASE_PROVIDER_IDS, databasePrices, databaseProviderId, fromDatabasePrice } from '../../src/prices/index.js';

const SONNET_4_5 = { input: 3, cacheRead: 0.3, cacheWrite: 3.75, cacheWrite1h: 6 };
const BEDROCK_SONNET_ID = 'us.anthropic.claude-sonnet-4-5-20250929-v1:0';

describe('provider names', () => {
  it('maps every provider cachebreak knows, each to an id genai-prices knows as itself', () => {
    expect(Object.keys(DATABASE_PROVIDER_IDS).sort()).toEqual(Object.keys(PROVIDERS).sort());
    expect(DATABASE_PROVIDER_IDS).toEqual({
      anthropic: 'anthropic',
      bedrock: 'aws',
      openai: 'openai',
      openrouter: 'openrouter',
      xai: 'x-ai',
      dashscope: undefined,
      gemini: 'google',
      deepseek: 'deepseek',
    });
    for (const id of Object.values(DATABASE_PROVIDER_IDS)) {
      if (id !== undefined) expect(findProvider({ providerId: id })?.id, id).toBe(id);
    }
    // DashScope really has no provider of its own there.
    for (const name of ['dashscope', 'alibaba', 'qwen']) expect(findProvider({ providerId: name }), name).toBeUndefined();
  });

  it('reads aliases as their provider, other names as genai-prices knows them, and no name as none', () => {
    expect(databaseProviderId('aws.bedrock')).toBe('aws');
    expect(databaseProviderId(' Azure ')).toBe('openai');
    expect(databaseProviderId('gcp.vertex_ai')).toBe('google');
    expect(databaseProviderId('x_ai')).toBe('x-ai');
    expect(databaseProviderId('qwen')).toBeUndefined();
    expect(databaseProviderId('Mistral')).toBe('mistral');
    expect(databaseProviderId('my-gateway')).toBeUndefined();
    expect(databaseProviderId('')).toBeUndefined();
    expect(databaseProviderId(undefined)).toBeUndefined();
  });
});

describe('databasePrices', () => {
  it('prices gpt-4o-mini as gpt-4o-mini, not as gpt-4o (a shorter id it starts with)', () => {
    const mini = { input: 0.15, cacheRead: 0.075, cacheWrite: 0.15, cacheWrite1h: 0.15 };
    expect(databasePrices('gpt-4o-mini', 'openai')).toEqual(mini);
    expect(databasePrices('gpt-4o-mini-2024-07-18', 'openai')).toEqual(mini);
    expect(databasePrices('gpt-4o-mini', undefined)).toEqual(mini);
    expect(databasePrices('gpt-4o', 'openai')).toEqual({ input: 2.5, cacheRead: 1.25, cacheWrite: 2.5, cacheWrite1h: 2.5 });
  });

  it('prices Claude Sonnet 4.5 by its alias and its dated id, with or without the provider', () => {
    expect(databasePrices('claude-sonnet-4-5', 'anthropic')).toEqual(SONNET_4_5);
    expect(databasePrices('claude-sonnet-4-5-20250929', 'anthropic')).toEqual(SONNET_4_5);
    expect(databasePrices('claude-sonnet-4-5-20250929', undefined)).toEqual(SONNET_4_5);
    expect(databasePrices('claude-sonnet-4-5', 'some-gateway')).toEqual(SONNET_4_5);
  });

  it("prices a Bedrock inference-profile id under Bedrock's own prices, which the id alone does not find", () => {
    expect(calcPrice({}, BEDROCK_SONNET_ID)).toBeNull();
    // Bedrock's regional premium; it lists no 1h write, so a 1h write costs a 5m one.
    const bedrock = { input: 3.3, cacheRead: 0.33, cacheWrite: 4.125, cacheWrite1h: 4.125 };
    expect(databasePrices(BEDROCK_SONNET_ID, 'bedrock')).toEqual(bedrock);
    expect(databasePrices(BEDROCK_SONNET_ID, 'aws.bedrock')).toEqual(bedrock);
    // The provider is asked first: the same bare id on Bedrock costs Bedrock's price.
    expect(databasePrices('claude-sonnet-4-5-20250929', 'bedrock')).toEqual(bedrock);
  });

  it('falls back to any provider when the named one does not list the id', () => {
    // OpenRouter lists "openai/gpt-4o-mini" only.
    expect(calcPrice({}, 'gpt-4o-mini', { providerId: 'openrouter' })).toBeNull();
    expect(databasePrices('gpt-4o-mini', 'openrouter')?.input).toBe(0.15);
    expect(databasePrices('anthropic/claude-sonnet-4.5', 'openrouter')).toMatchObject({ input: 3, cacheRead: 0.3, cacheWrite: 3.75 });
  });

  it('strips the "models/" path of Gemini REST ids', () => {
    const flash = { input: 0.3, cacheRead: 0.03, cacheWrite: 0.3, cacheWrite1h: 0.3 };
    expect(calcPrice({}, 'models/gemini-2.5-flash', { providerId: 'google' })).toBeNull();
    expect(databasePrices('gemini-2.5-flash', 'gemini')).toEqual(flash);
    expect(databasePrices('models/gemini-2.5-flash', 'gemini')).toEqual(flash);
    expect(databasePrices('models/gemini-2.5-flash', undefined)).toEqual(flash);
    // A tiered price counts at its base tier.
    expect(databasePrices('models/gemini-2.5-pro', 'google')).toEqual({ input: 1.25, cacheRead: 0.125, cacheWrite: 1.25, cacheWrite1h: 1.25 });
  });

  it('prices the other providers it maps', () => {
    expect(databasePrices('grok-code-fast-1', 'xai')).toEqual({ input: 0.2, cacheRead: 0.02, cacheWrite: 0.2, cacheWrite1h: 0.2 });
    expect(databasePrices('deepseek-chat', 'deepseek')).toEqual({ input: 0.27, cacheRead: 0.07, cacheWrite: 0.27, cacheWrite1h: 0.27 });
    expect(databasePrices('claude-haiku-4-5', 'anthropic')).toEqual({ input: 1, cacheRead: 0.1, cacheWrite: 1.25, cacheWrite1h: 2 });
  });

  describe('a price that changes with the time of day', () => {
    afterEach(() => vi.useRealTimers());

    it('counts at the day\'s highest rate, whatever the hour it is priced at', () => {
      const peak = Date.UTC(2026, 11, 7, 3);
      const offPeak = Date.UTC(2026, 11, 7, 18);
      const atPeak = calcPrice({}, 'deepseek-reasoner', { providerId: 'deepseek', timestamp: new Date(peak) })!.model_price;
      const atOffPeak = calcPrice({}, 'deepseek-reasoner', { providerId: 'deepseek', timestamp: new Date(offPeak) })!.model_price;
      // The database does price this model by the hour.
      expect(atOffPeak.input_mtok).toBeLessThan(atPeak.input_mtok as number);
      // First asked (the lookup is memoised per model) in the off-peak hours.
      vi.useFakeTimers({ toFake: ['Date'] });
      vi.setSystemTime(offPeak);
      expect(databasePrices('deepseek-reasoner', 'deepseek')).toEqual(fromDatabasePrice(atPeak));
    });
  });

  it('gives a model without a listed read price no read discount', () => {
    expect(databasePrices('mistral-large-latest', 'mistral')).toEqual({ input: 2, cacheRead: 2, cacheWrite: 2, cacheWrite1h: 2 });
  });

  it('knows nothing of a model the database lacks: undefined, never a price of 0', () => {
    for (const provider of [undefined, 'anthropic', 'openai', 'bedrock', 'dashscope', 'made-up']) {
      expect(databasePrices('acme-coder-2', provider), String(provider)).toBeUndefined();
    }
    // Listed, but priced by the hour of audio, not by token.
    expect(databasePrices('whisper-1', 'openai')).toBeUndefined();
    // Whatever the wire sends.
    for (const junk of ['', ' ', 'models/', '\u0000', 'x'.repeat(10_000), '(((', '.*']) expect(databasePrices(junk, 'openai')).toBeUndefined();
  });

  it('answers the same (model, provider) with the same price, without asking again', () => {
    const first = databasePrices('claude-opus-4-1', 'anthropic');
    expect(first).toEqual({ input: 15, cacheRead: 1.5, cacheWrite: 18.75, cacheWrite1h: 30 });
    expect(databasePrices('claude-opus-4-1', 'anthropic')).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
  });
});

describe('fromDatabasePrice', () => {
  it('takes numbers as given and a tiered price at its base', () => {
    expect(fromDatabasePrice({ input_mtok: 3, cache_read_mtok: 0.3, cache_write_mtok: 3.75, cache_write_1h_mtok: 6, output_mtok: 15 })).toEqual(SONNET_4_5);
    const tiered = (base: number) => ({ base, tiers: [{ start: 200_000, price: base * 2 }] });
    expect(
      fromDatabasePrice({ input_mtok: tiered(3), cache_read_mtok: tiered(0.3), cache_write_mtok: tiered(3.75), cache_write_1h_mtok: tiered(6) }),
    ).toEqual(SONNET_4_5);
  });

  it('fills a missing read and write from input, and a missing 1h write from the 5m write', () => {
    expect(fromDatabasePrice({ input_mtok: 2 })).toEqual({ input: 2, cacheRead: 2, cacheWrite: 2, cacheWrite1h: 2 });
    expect(fromDatabasePrice({ input_mtok: 2, cache_read_mtok: 0.5 })).toEqual({ input: 2, cacheRead: 0.5, cacheWrite: 2, cacheWrite1h: 2 });
    expect(fromDatabasePrice({ input_mtok: 2, cache_write_mtok: 2.5 })).toEqual({ input: 2, cacheRead: 2, cacheWrite: 2.5, cacheWrite1h: 2.5 });
    expect(fromDatabasePrice({ input_mtok: 2, cache_write_1h_mtok: 4 })).toEqual({ input: 2, cacheRead: 2, cacheWrite: 2, cacheWrite1h: 4 });
  });

  it('has no price without an input price, and ignores a price that is not a non-negative number', () => {
    expect(fromDatabasePrice({})).toBeUndefined();
    expect(fromDatabasePrice({ output_mtok: 10, cache_read_mtok: 1 })).toBeUndefined();
    expect(fromDatabasePrice({ input_mtok: -1 })).toBeUndefined();
    expect(fromDatabasePrice({ input_mtok: Number.NaN })).toBeUndefined();
    expect(fromDatabasePrice({ input_mtok: 2, cache_read_mtok: Number.POSITIVE_INFINITY })?.cacheRead).toBe(2);
    // A free model is priced at 0, which is a price.
    expect(fromDatabasePrice({ input_mtok: 0 })).toEqual({ input: 0, cacheRead: 0, cacheWrite: 0, cacheWrite1h: 0 });
  });
});
