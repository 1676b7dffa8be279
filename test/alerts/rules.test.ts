// What one evaluation of a project's sums finds, rule by rule.
import { describe, expect, it } from 'vitest';
import { evaluate, type AlertRules } from '../../src/alerts/rules.js';
import type { BreakCauseRow, TotalsRow } from '../../src/store/store.js';

const HOUR = 3_600_000;

function totals(fields: Partial<TotalsRow>): TotalsRow {
  return {
    turns: 0,
    breaks: 0,
    cacheRate: null,
    missedCacheReadTokens: 0,
    estimatedExtraCostUsd: null,
    unpricedBreaks: 0,
    tokens: { uncached: 0, read: 0, write: 0, write1h: 0, output: 0 },
    unreportedInputTokens: 0,
    ...fields,
  };
}

const cause = (reason: string, causeName: string | null, breaks: number) => ({ reason, cause: causeName, breaks, missedCacheReadTokens: 0, estimatedExtraCostUsd: null, unpricedBreaks: 0 }) as BreakCauseRow;

describe('alert rules', () => {
  const rate: AlertRules = { cacheRateBelow: 0.5, windowMs: HOUR, minTurns: 10 };

  it('cache rate: fires below the ratio once the window has the turns, not at it or with fewer turns', () => {
    expect(evaluate(rate, { window: totals({ turns: 10, cacheRate: 0.49 }) })).toEqual([{ rule: 'cache_rate_below', subject: null, firing: true, value: 0.49, threshold: 0.5 }]);
    expect(evaluate(rate, { window: totals({ turns: 10, cacheRate: 0.5 }) })[0]!.firing).toBe(false);
    expect(evaluate(rate, { window: totals({ turns: 9, cacheRate: 0 }) })[0]!.firing).toBe(false);
    // No turn reported cache usage, or nothing stored in the window: nothing to judge.
    expect(evaluate(rate, { window: totals({ turns: 50, cacheRate: null }) })[0]!.firing).toBe(false);
    expect(evaluate(rate, { window: undefined })[0]!.firing).toBe(false);
  });

  it('extra cost: compares USD per hour over the window', () => {
    const rules: AlertRules = { extraCostAbove: 5, windowMs: 2 * HOUR, minTurns: 10 };
    // $12 over two hours is $6 an hour.
    expect(evaluate(rules, { window: totals({ estimatedExtraCostUsd: 12 }) })).toEqual([{ rule: 'extra_cost_above', subject: null, firing: true, value: 6, threshold: 5 }]);
    expect(evaluate(rules, { window: totals({ estimatedExtraCostUsd: 10 }) })[0]!.firing).toBe(false);
    // Every break unpriced: no basis for a figure, no alert.
    expect(evaluate(rules, { window: totals({ estimatedExtraCostUsd: null, unpricedBreaks: 40 }) })[0]).toMatchObject({ firing: false, value: 0 });
  });

  it('new reason: one condition per reason and cause of the window not seen before it', () => {
    const rules: AlertRules = { newBreakReason: true, windowMs: HOUR, minTurns: 10 };
    const found = evaluate(rules, {
      window: undefined,
      causes: {
        window: [cause('tools_changed', null, 3), cause('system_changed', null, 1), cause('likely_provider_ttl_or_eviction', 'ttl_expired', 2), cause('likely_provider_ttl_or_eviction', 'likely_server_eviction', 1)],
        known: new Set(['system_changed', 'likely_provider_ttl_or_eviction/ttl_expired']),
      },
    });
    expect(found).toEqual([
      { rule: 'new_break_reason', subject: 'tools_changed', firing: true, value: 3, threshold: null },
      { rule: 'new_break_reason', subject: 'likely_provider_ttl_or_eviction/likely_server_eviction', firing: true, value: 1, threshold: null },
    ]);
  });

  it('only the rules that are on', () => {
    expect(evaluate({ windowMs: HOUR, minTurns: 1 }, { window: totals({ turns: 5, cacheRate: 0, estimatedExtraCostUsd: 100 }) })).toEqual([]);
  });
});
