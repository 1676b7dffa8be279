import { describe, expect, it } from 'vitest';
import { DEFAULT_PRICES, extraCostUsd, findPrice } from '../../src/core/prices.js';

describe('price table', () => {
  it('matches the longest id prefix, through provider decorations', () => {
    expect(findPrice(DEFAULT_PRICES, 'claude-sonnet-4-5-20250929')?.inputUsdPerMTok).toBe(3);
    expect(findPrice(DEFAULT_PRICES, 'claude-opus-4-5-20251101')?.inputUsdPerMTok).toBe(5);
    expect(findPrice(DEFAULT_PRICES, 'claude-opus-4-1-20250805')?.inputUsdPerMTok).toBe(15);
    expect(findPrice(DEFAULT_PRICES, 'us.anthropic.claude-sonnet-4-5-20250929-v1:0')?.inputUsdPerMTok).toBe(3);
    expect(findPrice(DEFAULT_PRICES, 'anthropic/claude-haiku-4-5')?.inputUsdPerMTok).toBe(1);
    expect(findPrice(DEFAULT_PRICES, 'models/gemini-2.5-flash')?.inputUsdPerMTok).toBe(0.3);
    expect(findPrice(DEFAULT_PRICES, 'gpt-5-mini-2025-08-07')?.inputUsdPerMTok).toBe(0.25);
  });

  it('knows nothing of unknown models, and a config table replaces the defaults', () => {
    expect(findPrice(DEFAULT_PRICES, 'my-local-llama')).toBeUndefined();
    expect(findPrice(DEFAULT_PRICES, undefined)).toBeUndefined();
    const custom = { 'my-local-llama': { inputUsdPerMTok: 1, readMultiplier: 0, write5mMultiplier: 1, write1hMultiplier: 1 } };
    expect(findPrice(custom, 'my-local-llama-70b')?.inputUsdPerMTok).toBe(1);
    // Looked up twice: the cached answer is the same.
    expect(findPrice(custom, 'my-local-llama-70b')?.inputUsdPerMTok).toBe(1);
  });

  it('prices rewritten tokens at the write rate (1h share at 2×) and the rest as uncached input', () => {
    const sonnet = findPrice(DEFAULT_PRICES, 'claude-sonnet-4-5')!;
    // 10,000 missed: 6,000 rewritten (2,000 of them 1h), 4,000 paid uncached.
    const cost = extraCostUsd(sonnet, 10_000, { write: 6_000, write1h: 2_000 });
    const expected = (4_000 * (1.25 - 0.1) + 2_000 * (2 - 0.1) + 4_000 * (1 - 0.1)) * 3 / 1e6;
    expect(cost).toBeCloseTo(expected, 6);
    const gpt = findPrice(DEFAULT_PRICES, 'gpt-5')!;
    expect(extraCostUsd(gpt, 1_000_000, { write: 0, write1h: 0 })).toBeCloseTo(1.25 * 0.9, 6);
  });
});
