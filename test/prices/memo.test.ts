// The memo in front of every price lookup: one question per (model,
// provider), and a bound on what it keeps, since model ids come from the wire.
import { describe, expect, it } from 'vitest';
import type { ModelPrice, PriceLookup } from '../../src/core/prices.js';
import { MEMO_CAPACITY, memoised } from '../../src/prices/index.js';

function counting(): { lookup: PriceLookup; asked: string[] } {
  const asked: string[] = [];
  const lookup: PriceLookup = (model, provider) => {
    asked.push(`${provider ?? '-'}|${model}`);
    return model.startsWith('known') ? ({ input: model.length, cacheRead: 0, cacheWrite: 0, cacheWrite1h: 0 } satisfies ModelPrice) : undefined;
  };
  return { lookup, asked };
}

describe('memoised', () => {
  it('asks once per (model, provider), unknown answers included', () => {
    const { lookup, asked } = counting();
    const memo = memoised(lookup);
    const price = memo('known-1', 'openai');
    expect(price?.input).toBe(7);
    expect(memo('known-1', 'openai')).toBe(price);
    expect(memo('nope', undefined)).toBeUndefined();
    expect(memo('nope', undefined)).toBeUndefined();
    expect(asked).toEqual(['openai|known-1', '-|nope']);
  });

  it('tells apart pairs whose names run together', () => {
    const { lookup, asked } = counting();
    const memo = memoised(lookup);
    memo('known-bc', 'a');
    memo('c', 'aknown-b');
    memo('known-x', undefined);
    memo('known-x', '');
    memo('~known-x', undefined);
    expect(asked).toHaveLength(5);
  });

  it('keeps at most its capacity, forgetting the oldest first', () => {
    const { lookup, asked } = counting();
    const memo = memoised(lookup, 2);
    memo('known-a', undefined);
    memo('known-b', undefined);
    memo('known-c', undefined);
    memo('known-b', undefined);
    memo('known-c', undefined);
    expect(asked).toEqual(['-|known-a', '-|known-b', '-|known-c']);
    memo('known-a', undefined);
    expect(asked).toHaveLength(4);
    expect(MEMO_CAPACITY).toBeGreaterThanOrEqual(256);
    expect(() => memoised(lookup, 0)).toThrow(RangeError);
  });

  it('stays bounded however many distinct ids arrive', () => {
    const { lookup, asked } = counting();
    const memo = memoised(lookup, 100);
    for (let i = 0; i < 10_000; i++) memo(`junk-${i}`, 'openai');
    // The newest 100 are remembered, the 101st newest is not.
    memo('junk-9999', 'openai');
    memo('junk-9900', 'openai');
    expect(asked).toHaveLength(10_000);
    memo('junk-9899', 'openai');
    expect(asked).toHaveLength(10_001);
  });
});
