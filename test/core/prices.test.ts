import { describe, expect, it } from 'vitest';
import { extraCostUsd, type ModelPrice } from '../../src/core/prices.js';

const SONNET: ModelPrice = { input: 3, cacheRead: 0.3, cacheWrite: 3.75, cacheWrite1h: 6 };
const GPT: ModelPrice = { input: 1.25, cacheRead: 0.125, cacheWrite: 1.25, cacheWrite1h: 1.25 };

describe('extra cost of a break (SPEC §4.10)', () => {
  it('explicit caching: the missed tokens written again, the part the turn wrote at 1h at the 1h price', () => {
    // 10,000 missed; the turn wrote 12,000, 2,000 of them at 1h.
    const cost = extraCostUsd(SONNET, 10_000, 'explicit', { write: 12_000, write1h: 2_000 });
    expect(cost).toBeCloseTo((8_000 * (3.75 - 0.3) + 2_000 * (6 - 0.3)) / 1e6, 9);
    expect(extraCostUsd(SONNET, 10_000, 'explicit', { write: 10_000, write1h: 0 })).toBeCloseTo((10_000 * (3.75 - 0.3)) / 1e6, 9);
  });

  it('explicit caching: missed tokens the turn did not write (caching turned off) were paid as plain input, not written again', () => {
    // 10,000 missed; the turn wrote 4,000 (1,000 at 1h): 1,000 at 1h, 3,000 at 5m, 6,000 as input.
    expect(extraCostUsd(SONNET, 10_000, 'explicit', { write: 4_000, write1h: 1_000 })).toBeCloseTo((1_000 * (6 - 0.3) + 3_000 * (3.75 - 0.3) + 6_000 * (3 - 0.3)) / 1e6, 9);
    // Nothing written at all: every missed token at the input price (+28 % if priced as a 5m write).
    expect(extraCostUsd(SONNET, 10_000, 'explicit', { write: 0, write1h: 0 })).toBeCloseTo((10_000 * (3 - 0.3)) / 1e6, 9);
  });

  it('explicit caching whose usage reports no writes (a gateway): every missed token written again at 5m', () => {
    expect(extraCostUsd(SONNET, 10_000, 'explicit', { write: 0, write1h: 0, writeReported: false })).toBeCloseTo((10_000 * (3.75 - 0.3)) / 1e6, 9);
  });

  it('automatic caching: the missed tokens paid as plain input instead of a read', () => {
    expect(extraCostUsd(GPT, 1_000_000, 'automatic', { write: 0, write1h: 0 })).toBeCloseTo(1.25 - 0.125, 9);
  });

  it('is rounded to whole micro-dollars, the unit aggregates sum exactly', () => {
    const cost = extraCostUsd(SONNET, 7, 'explicit', { write: 7, write1h: 0 });
    expect(cost * 1e6).toBeCloseTo(Math.round(7 * (3.75 - 0.3)), 9);
  });
});
