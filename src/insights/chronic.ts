// Chronic misses (core/insights/chronic.ts defines them): the streams of low
// cache rate from the streams' running sums, each cause named from the
// stream's newest snapshots.
import { CAUSE_ADVICE, CHRONIC_MAX_RATE, CHRONIC_MIN_TURNS, CHRONIC_SNAPSHOTS, chronicCause, type ChronicCause } from '../core/insights/chronic.js';
import { pricedOf, type Priced } from '../core/insights/money.js';
import { cacheRate } from '../core/rate.js';
import type { Filters, Store, StreamSums, TimeRange } from '../store/store.js';

export interface ChronicStream extends Pick<StreamSums, 'sessionId' | 'agentId' | 'firstSeen' | 'lastSeen' | 'turns' | 'measuredTurns'> {
  cacheRate: number | null;
  /** Input it did not read from the cache: uncached + written. */
  unreadTokens: number;
  readTokens: number;
  writtenTokens: number;
  cause: ChronicCause;
  advice: string;
  /** What its breaks cost. */
  breaks: number;
  breakCost: Priced;
}

export async function readChronicMisses(store: Store, project: string, range: TimeRange, filters: Filters, limit: number): Promise<{ streams: ChronicStream[] }> {
  const found = await store.lowRateStreams(project, range, filters, CHRONIC_MIN_TURNS, CHRONIC_MAX_RATE, limit);
  const streams: ChronicStream[] = [];
  for (const s of found) {
    const cause = chronicCause(await store.streamSnapshots(project, s.sessionId, s.agentId, CHRONIC_SNAPSHOTS));
    const { uncached, read, write } = s.tokens;
    streams.push({
      sessionId: s.sessionId,
      agentId: s.agentId,
      firstSeen: s.firstSeen,
      lastSeen: s.lastSeen,
      turns: s.turns,
      measuredTurns: s.measuredTurns,
      cacheRate: cacheRate(s.tokens),
      unreadTokens: uncached + write,
      readTokens: read,
      writtenTokens: write,
      cause,
      advice: CAUSE_ADVICE[cause],
      breaks: s.breaks,
      breakCost: pricedOf(s.breaks, s.extraCostMicroUsd, s.unpricedBreaks),
    });
  }
  return { streams };
}
