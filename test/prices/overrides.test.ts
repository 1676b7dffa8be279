// Prices a config file gives: both forms, the longest matching id prefix
// through provider decorations, winning over the database, and errors that
// say which model and which field are wrong.
import { describe, expect, it } from 'vitest';
import { bareModelId, databasePrices, parsePriceOverrides, PriceOverrideError, priceLookup, withOverrides } from '../../src/prices/index.js';

const SONNET_4_5 = { input: 3, cacheRead: 0.3, cacheWrite: 3.75, cacheWrite1h: 6 };

function errorOf(json: unknown): string {
  try {
    parsePriceOverrides(json);
  } catch (error) {
    expect(error).toBeInstanceOf(PriceOverrideError);
    return (error as Error).message;
  }
  throw new Error('expected a PriceOverrideError');
}

describe('parsePriceOverrides', () => {
  it('reads absolute prices, USD per million tokens', () => {
    expect(parsePriceOverrides({ 'acme-coder': SONNET_4_5 })).toEqual({ 'acme-coder': SONNET_4_5 });
  });

  it('fills what the absolute form leaves out as the database does: read and write at input, 1h write at the 5m write', () => {
    expect(parsePriceOverrides({ a: { input: 2 } }).a).toEqual({ input: 2, cacheRead: 2, cacheWrite: 2, cacheWrite1h: 2 });
    expect(parsePriceOverrides({ a: { input: 2, cacheRead: 0.2 } }).a).toEqual({ input: 2, cacheRead: 0.2, cacheWrite: 2, cacheWrite1h: 2 });
    expect(parsePriceOverrides({ a: { input: 2, cacheWrite: 2.5 } }).a).toEqual({ input: 2, cacheRead: 2, cacheWrite: 2.5, cacheWrite1h: 2.5 });
    expect(parsePriceOverrides({ a: { input: 2, cacheWrite1h: 4 } }).a).toEqual({ input: 2, cacheRead: 2, cacheWrite: 2, cacheWrite1h: 4 });
    expect(parsePriceOverrides({ a: { input: 0 } }).a).toEqual({ input: 0, cacheRead: 0, cacheWrite: 0, cacheWrite1h: 0 });
  });

  it('still reads the older form: an input price with multipliers, defaulting to 0.1, 1.25 and 2', () => {
    const old = { inputUsdPerMTok: 10, readMultiplier: 0.2, write5mMultiplier: 1.5, write1hMultiplier: 3 };
    expect(parsePriceOverrides({ a: old }).a).toEqual({ input: 10, cacheRead: 2, cacheWrite: 15, cacheWrite1h: 30 });
    expect(parsePriceOverrides({ a: { inputUsdPerMTok: 3 } }).a).toEqual(SONNET_4_5);
    expect(parsePriceOverrides({ a: { inputUsdPerMTok: 7 } }).a).toEqual({ input: 7, cacheRead: 0.7, cacheWrite: 8.75, cacheWrite1h: 14 });
    expect(parsePriceOverrides({ a: { inputUsdPerMTok: 10, write5mMultiplier: 1.5 } }).a).toEqual({ input: 10, cacheRead: 1, cacheWrite: 15, cacheWrite1h: 20 });
  });

  it('accepts an empty file: no overrides', () => {
    expect(parsePriceOverrides({})).toEqual({});
  });

  it('refuses what is not an object of model → price', () => {
    for (const json of [null, [], 'x', 3]) expect(errorOf(json)).toMatch(/^expected an object of model id \(or id prefix\) → price, such as \{"acme-coder": \{"input": 3/);
    expect(errorOf({ 'acme-coder': 3 })).toBe(
      'model "acme-coder": expected a price such as {"input": 3, "cacheRead": 0.3, "cacheWrite": 3.75, "cacheWrite1h": 6} (USD per million tokens), got 3',
    );
    expect(errorOf({ 'acme-coder': [1] })).toMatch(/^model "acme-coder": expected a price such as .* got \[1\]$/);
    expect(errorOf({ 'acme-coder': null })).toMatch(/^model "acme-coder": expected a price such as .* got null$/);
  });

  it('names the model and the field of a bad price', () => {
    expect(errorOf({ 'acme-coder': { input: -1 } })).toBe('model "acme-coder": input must be a non-negative number, got -1');
    expect(errorOf({ 'acme-coder': { input: 3, cacheRead: '0.3' } })).toBe('model "acme-coder": cacheRead must be a non-negative number, got "0.3"');
    expect(errorOf({ 'acme-coder': { input: 3, cacheWrite: null } })).toBe('model "acme-coder": cacheWrite must be a non-negative number, got null');
    expect(errorOf({ 'acme-coder': { input: 3, cacheWrite1h: true } })).toBe('model "acme-coder": cacheWrite1h must be a non-negative number, got true');
    expect(errorOf({ 'acme-coder': { inputUsdPerMTok: 'ten' } })).toBe('model "acme-coder": inputUsdPerMTok must be a non-negative number, got "ten"');
    expect(errorOf({ 'acme-coder': { inputUsdPerMTok: 10, readMultiplier: -0.1 } })).toBe(
      'model "acme-coder": readMultiplier must be a non-negative number, got -0.1',
    );
  });

  it('names a missing input price, an unknown field and mixed forms', () => {
    expect(errorOf({ 'acme-coder': { cacheRead: 0.3 } })).toBe(
      'model "acme-coder": input is missing (USD per million input tokens), as in {"input": 3, "cacheRead": 0.3, "cacheWrite": 3.75, "cacheWrite1h": 6}',
    );
    expect(errorOf({ 'acme-coder': {} })).toMatch(/^model "acme-coder": input is missing/);
    expect(errorOf({ 'acme-coder': { readMultiplier: 0.1 } })).toBe('model "acme-coder": inputUsdPerMTok is missing (USD per million input tokens)');
    expect(errorOf({ 'acme-coder': { input: 3, cache_read: 0.3 } })).toBe(
      'model "acme-coder": unknown field "cache_read"; expected input, cacheRead, cacheWrite, cacheWrite1h (USD per million tokens), or the older inputUsdPerMTok, readMultiplier, write5mMultiplier, write1hMultiplier',
    );
    expect(errorOf({ 'acme-coder': { input: 3, readMultiplier: 0.1 } })).toBe(
      'model "acme-coder": mixes input with readMultiplier; give either input, cacheRead, cacheWrite, cacheWrite1h or inputUsdPerMTok, readMultiplier, write5mMultiplier, write1hMultiplier',
    );
  });

  it('refuses a key that names no model, and two keys that name the same one', () => {
    expect(errorOf({ 'us.anthropic.': { input: 1 } })).toBe('model "us.anthropic.": names no model once lower-cased and stripped of provider decorations');
    expect(errorOf({ '': { input: 1 } })).toMatch(/^model "": names no model/);
    expect(errorOf({ 'acme-coder': { input: 1 }, 'vendor/ACME-coder': { input: 2 } })).toBe(
      'model "vendor/ACME-coder": the same model as "acme-coder" (both are "acme-coder"); keep one',
    );
  });
});

describe('bareModelId', () => {
  it('drops paths, Bedrock regions and vendors, and case', () => {
    expect(bareModelId('claude-sonnet-4-5')).toBe('claude-sonnet-4-5');
    expect(bareModelId('Claude-Sonnet-4-5')).toBe('claude-sonnet-4-5');
    expect(bareModelId('anthropic/claude-sonnet-4.5')).toBe('claude-sonnet-4.5');
    expect(bareModelId('models/gemini-2.5-pro')).toBe('gemini-2.5-pro');
    expect(bareModelId('anthropic.claude-sonnet-4-5-20250929-v1:0')).toBe('claude-sonnet-4-5-20250929-v1:0');
    for (const region of ['us', 'eu', 'jp', 'apac', 'global']) {
      expect(bareModelId(`${region}.anthropic.claude-sonnet-4-5-20250929-v1:0`), region).toBe('claude-sonnet-4-5-20250929-v1:0');
    }
    expect(bareModelId('us.meta.llama3-3-70b-instruct-v1:0')).toBe('llama3-3-70b-instruct-v1:0');
    expect(bareModelId('arn:aws:bedrock:us-east-1::foundation-model/amazon.nova-pro-v1:0')).toBe('nova-pro-v1:0');
    // Only a known vendor after the region is a decoration.
    expect(bareModelId('us.acme.coder')).toBe('us.acme.coder');
  });
});

describe('withOverrides', () => {
  const overrides = parsePriceOverrides({
    acme: { input: 1 },
    'acme-coder': { input: 10, cacheRead: 2, cacheWrite: 15 },
    'ACME-Coder-2-Large': { input: 20 },
    'claude-sonnet-4-5': { input: 4, cacheRead: 0.4, cacheWrite: 5, cacheWrite1h: 8 },
  });
  const prices = withOverrides(overrides, databasePrices);

  it('matches the longest key the bare id starts with, whatever its case or decorations', () => {
    const coder = { input: 10, cacheRead: 2, cacheWrite: 15, cacheWrite1h: 15 };
    expect(prices('acme-coder-2', 'anthropic')).toEqual(coder);
    expect(prices('ACME-CODER-2', undefined)).toEqual(coder);
    expect(prices('us.anthropic.acme-coder-2-v1:0', 'bedrock')).toEqual(coder);
    expect(prices('acme/acme-coder-2', 'openrouter')).toEqual(coder);
    expect(prices('models/acme-coder-2', 'gemini')).toEqual(coder);
    expect(prices('acme-coder-2-large-0901', 'openai')?.input).toBe(20);
    expect(prices('acme-chat', 'openai')?.input).toBe(1);
    // A key is a prefix of the id, not the other way round.
    expect(prices('acm', 'openai')).toBeUndefined();
    expect(prices('my-acme-coder', 'openai')).toBeUndefined();
  });

  it('wins over the database, and leaves it every other model', () => {
    expect(databasePrices('claude-sonnet-4-5', 'anthropic')).toEqual(SONNET_4_5);
    expect(prices('claude-sonnet-4-5', 'anthropic')).toEqual({ input: 4, cacheRead: 0.4, cacheWrite: 5, cacheWrite1h: 8 });
    expect(prices('claude-sonnet-4-5-20250929', 'bedrock')?.input).toBe(4);
    expect(prices('gpt-4o-mini', 'openai')).toEqual(databasePrices('gpt-4o-mini', 'openai'));
    expect(prices('claude-haiku-4-5', 'anthropic')).toEqual({ input: 1, cacheRead: 0.1, cacheWrite: 1.25, cacheWrite1h: 2 });
    expect(prices('not-a-model-anyone-sells', 'openai')).toBeUndefined();
  });

  it('is the database itself when there are no overrides', () => {
    expect(priceLookup()).toBe(databasePrices);
    expect(priceLookup({})).toBe(databasePrices);
    expect(priceLookup(overrides)('acme-coder-9', 'openai')?.input).toBe(10);
    expect(priceLookup(overrides)('claude-opus-4-1', 'anthropic')?.input).toBe(15);
  });
});
