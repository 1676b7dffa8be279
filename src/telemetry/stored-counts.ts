// Counters that start from what the store holds: after a restart, an import
// or `cachebreak demo`, /metrics shows the stored totals of turns, tokens and
// breaks instead of starting again at 0, and keeps growing from them as long
// as the database is kept. The other counters (events, proxy, OTLP records
// ignored, bodies cut, waiting halves evicted) count what this process saw.
import type { StoredCounts } from '../store/store.js';
import { TOKEN_KINDS, type Counters } from './counters.js';
import { pairOf } from './top-models.js';

export function seedCounters(counters: Counters, stored: readonly StoredCounts[]): void {
  // The most used models first, so that the models given series of their own
  // (telemetry/top-models.ts) are each project's top ones, as when counted live.
  const turnsOf = new Map<string, number>();
  const keyOf = (row: StoredCounts) => `${row.project}\u0000${pairOf(row.model, row.provider)}`;
  for (const row of stored) turnsOf.set(keyOf(row), (turnsOf.get(keyOf(row)) ?? 0) + row.turns);
  const rows = [...stored].sort((a, b) => turnsOf.get(keyOf(b))! - turnsOf.get(keyOf(a))!);
  for (const row of rows) {
    const base = { project: row.project, model: row.model, provider: row.provider };
    counters.inc('turns', { ...base, state: row.state }, row.turns);
    const { uncached, read, write, output } = row.tokens;
    [uncached, read, write, output].forEach((tokens, i) => counters.inc('tokens', { ...base, kind: TOKEN_KINDS[i]! }, tokens));
    counters.expose('bodiesTruncated', { project: row.project });
    if (row.breaks === 0) continue;
    const labels = { ...base, reason: row.reason };
    counters.inc('breaks', labels, row.breaks);
    counters.inc('missed', labels, row.missed);
    counters.inc('cost', labels, row.extraCostUsd);
    counters.inc('unpriced', labels, row.unpriced);
  }
}
