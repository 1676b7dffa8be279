// Avoidable breaks (core/insights/avoidable.ts defines them), read through the
// Store: tools_order_changed from the break rollups (breakCauses,
// changedTools), system_changed and breakpoint_lookback_exceeded from their
// break records (few: each is a change to the prompt, not a turn), how far a
// lookback break's breakpoint lay from the prefixes it compares.
import { avoidableBreaks, EXAMPLES, type Avoidable, type AvoidableInput } from '../core/insights/avoidable.js';
import { MICRO } from '../core/insights/money.js';
import type { BreakReason } from '../core/types.js';
import { readAll } from '../store/paging.js';
import type { Filters, Store, TimeRange } from '../store/store.js';

/** The newest breakpoint_lookback_exceeded breaks whose prefixes are read: each costs a lookup. */
export const MAX_LOOKBACK_BREAKS = 500;

const only = (filters: Filters, reason: BreakReason): Filters => ({ ...filters, reason: [reason] });

export async function readAvoidable(store: Store, project: string, range: TimeRange, filters: Filters): Promise<Avoidable> {
  const order = only(filters, 'tools_order_changed');
  const [causes, tools, examples, system, lookbackBreaks] = await Promise.all([
    store.breakCauses(project, range, order),
    store.changedTools(project, range, order, 20),
    store.breaks(project, range, order, { limit: EXAMPLES }),
    readAll((page) => store.breaks(project, range, only(filters, 'system_changed'), page)),
    store.breaks(project, range, only(filters, 'breakpoint_lookback_exceeded'), { limit: MAX_LOOKBACK_BREAKS }),
  ]);
  const sums = { breaks: 0, missedCacheReadTokens: 0, extraCostMicroUsd: 0, unpricedBreaks: 0 };
  for (const row of causes) {
    sums.breaks += row.breaks;
    sums.missedCacheReadTokens += row.missedCacheReadTokens;
    sums.extraCostMicroUsd += Math.round((row.estimatedExtraCostUsd ?? 0) * MICRO);
    sums.unpricedBreaks += row.unpricedBreaks;
  }
  const lookback: AvoidableInput['lookback'] = [];
  for (const b of lookbackBreaks.items) {
    const found = await store.breakPrefixes(project, b.requestId);
    lookback.push({ ...b, baseline: found?.baseline ?? null, turn: found?.turn ?? null });
  }
  return avoidableBreaks({
    toolOrder: { sums, tools: tools.map((t) => ({ name: t.name, breaks: t.breaks })), examples: examples.items.map((b) => b.requestId) },
    system,
    lookback,
  });
}
