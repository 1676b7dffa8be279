// Insight 2, volatile prefix parts: the system blocks and tools that change
// most often, across sessions and over time, ranked by the re-write cost
// their changes caused.
//
// Definitions (docs/insights.md#volatile-prefix-parts):
// - A part is a system block position ("system:2") or a tool by name.
// - A break involves the system blocks it changed (changedSystemBlocks) and
//   the tools it added, removed or whose schema changed (toolChanges; a tool
//   that only moved is the avoidable-breaks insight's).
// - A part's cost is the sum of estimatedExtraCostUsd over the breaks that
//   involve it (a break that changed two parts counts whole for each), priced
//   breaks only, the others counted apart (SPEC §4.10); its spread is the
//   number of sessions and of UTC days those breaks fell in.
// Ranked by cost, most first (unpriced-only parts last), then by breaks.
import type { BreakRecord } from '../types.js';
import { Tally, type Priced } from './money.js';

const DAY_MS = 86_400_000;

export interface VolatilePart {
  kind: 'system_block' | 'tool';
  /** "system:2", or the tool's name. */
  name: string;
  breaks: number;
  sessions: number;
  days: number;
  missedCacheReadTokens: number;
  cost: Priced;
  /** The newest break that changed it. */
  latestRequestId: string;
}

export type VolatileBreak = Pick<BreakRecord, 'requestId' | 'sessionId' | 'ts' | 'changedSystemBlocks' | 'toolChanges' | 'missedCacheReadTokens' | 'estimatedExtraCostUsd'>;

interface Acc {
  part: Omit<VolatilePart, 'sessions' | 'days' | 'cost'>;
  sessions: Set<string>;
  days: Set<number>;
  money: Tally;
  latestTs: number;
}

export function volatileParts(breaks: readonly VolatileBreak[], limit: number): VolatilePart[] {
  const parts = new Map<string, Acc>();
  const touch = (kind: VolatilePart['kind'], name: string, b: VolatileBreak) => {
    const key = `${kind}\u0000${name}`;
    let acc = parts.get(key);
    if (!acc) {
      acc = { part: { kind, name, breaks: 0, missedCacheReadTokens: 0, latestRequestId: b.requestId }, sessions: new Set(), days: new Set(), money: new Tally(), latestTs: -Infinity };
      parts.set(key, acc);
    }
    acc.part.breaks++;
    acc.part.missedCacheReadTokens += b.missedCacheReadTokens;
    acc.sessions.add(b.sessionId);
    acc.days.add(Math.floor(b.ts / DAY_MS));
    acc.money.add(b.estimatedExtraCostUsd);
    if (b.ts > acc.latestTs || (b.ts === acc.latestTs && b.requestId > acc.part.latestRequestId)) {
      acc.latestTs = b.ts;
      acc.part.latestRequestId = b.requestId;
    }
  };
  for (const b of breaks) {
    for (const k of new Set(b.changedSystemBlocks ?? [])) touch('system_block', `system:${k}`, b);
    const { added, removed, schemaChanged } = b.toolChanges;
    for (const name of new Set([...added, ...removed, ...schemaChanged])) touch('tool', name, b);
  }
  const usd = (p: VolatilePart) => p.cost.usd ?? -1;
  return [...parts.values()]
    .map(({ part, sessions, days, money }) => ({ ...part, sessions: sessions.size, days: days.size, cost: money.priced }))
    .sort((a, b) => usd(b) - usd(a) || b.breaks - a.breaks || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .slice(0, limit);
}
