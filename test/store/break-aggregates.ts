// The cause and changed-tool breakdowns as an aggregation of break records
// themselves: what the stored break rollups must equal.
import type { BreakRecord } from '../../src/core/types.js';
import type { BreakCauseRow, ChangedTool } from '../../src/store/store.js';

export function causesOf(records: BreakRecord[]): BreakCauseRow[] {
  const rows = new Map<string, BreakCauseRow & { micro: number }>();
  for (const b of records) {
    const key = `${b.reason}\u0000${b.cause ?? ''}`;
    const row = rows.get(key) ?? { reason: b.reason, cause: b.cause, breaks: 0, missedCacheReadTokens: 0, estimatedExtraCostUsd: 0, unpricedBreaks: 0, micro: 0 };
    row.breaks++;
    row.missedCacheReadTokens += b.missedCacheReadTokens;
    // An unknown price is counted, never added as $0 (SPEC §4.10).
    if (b.estimatedExtraCostUsd === null) row.unpricedBreaks++;
    else row.micro += Math.round(b.estimatedExtraCostUsd * 1e6);
    rows.set(key, row);
  }
  return [...rows.values()]
    .map(({ micro, ...row }) => ({ ...row, estimatedExtraCostUsd: row.unpricedBreaks === row.breaks ? null : micro / 1e6 }))
    .sort((a, b) => b.breaks - a.breaks || a.reason.localeCompare(b.reason) || (a.cause ?? '').localeCompare(b.cause ?? ''));
}

export function toolsOf(records: BreakRecord[]): ChangedTool[] {
  const counts = new Map<string, number>();
  for (const b of records) for (const name of b.changedToolNames) counts.set(name, (counts.get(name) ?? 0) + 1);
  return [...counts].map(([name, breaks]) => ({ name, breaks })).sort((a, b) => b.breaks - a.breaks || (a.name < b.name ? -1 : 1));
}
