// Insight 3, fan-out cold starts: requests that start together with the same
// prefix, none able to read what another is still writing, so each writes it.
//
// Definitions (docs/insights.md#fan-out-cold-starts):
// - A cold turn is one with nothing to read (state `cold`, SPEC §4.1): a
//   stream's first turn, or one whose earlier turns were all still in flight
//   (concurrentRequestIds, SPEC §4.2).
// - Its prefix key is (model family, tool list, system prompt).
// - A fan-out is two or more cold turns of one key, each starting within
//   FANOUT_WINDOW_MS of the first of them.
// - Written more than once: for every turn after the first, the part of its
//   write the first also wrote, min(its write, the first's write). Had it
//   waited for the first's first token it would have read those tokens: the
//   cost is what writing them cost beyond reading them, at the turn's price
//   (core/prices.ts extraCostUsd), unpriced models counted apart.
import { modelFamily } from '../family.js';
import { extraCostUsd, type PriceLookup } from '../prices.js';
import { Tally, type Priced } from './money.js';

export const FANOUT_WINDOW_MS = 30_000;
export const FANOUT_ADVICE =
  'Warm the shared prefix once: send one request first, and release the others when its first token arrives; they then read what it wrote.';

/** A cold turn as the store reads it. */
export interface ColdTurn {
  requestId: string;
  sessionId: string;
  agentId: string;
  ts: number;
  model: string;
  provider: string;
  systemHash: string | null;
  toolsHash: string | null;
  write: number;
  write1h: number;
}

export interface FanOut {
  model: string;
  ts: number;
  turns: number;
  sessions: number;
  /** The first turn's request id, then the others'. */
  requestIds: string[];
  /** What the first wrote. */
  writtenOnceTokens: number;
  /** What the others wrote of it again. */
  writtenAgainTokens: number;
  cost: Priced;
}

export interface FanOuts {
  fanOuts: FanOut[];
  /** Over every fan-out, not only the ones listed. */
  fanOutCount: number;
  writtenAgainTokens: number;
  cost: Priced;
  advice: string;
}

export function fanOuts(cold: readonly ColdTurn[], prices: PriceLookup, limit: number): FanOuts {
  const byKey = new Map<string, ColdTurn[]>();
  for (const turn of cold) {
    const key = JSON.stringify([modelFamily(turn.model), turn.toolsHash, turn.systemHash]);
    const list = byKey.get(key);
    if (list) list.push(turn);
    else byKey.set(key, [turn]);
  }
  const found: FanOut[] = [];
  const total = new Tally();
  let again = 0;
  for (const turns of byKey.values()) {
    turns.sort((a, b) => a.ts - b.ts || (a.requestId < b.requestId ? -1 : 1));
    for (let i = 0; i < turns.length; ) {
      const first = turns[i]!;
      let j = i + 1;
      while (j < turns.length && turns[j]!.ts - first.ts <= FANOUT_WINDOW_MS) j++;
      if (j - i >= 2) {
        const group = turns.slice(i, j);
        const money = new Tally();
        let tokens = 0;
        for (const turn of group.slice(1)) {
          const repeated = Math.min(turn.write, first.write);
          tokens += repeated;
          const price = prices(turn.model, turn.provider || undefined);
          money.add(price === undefined ? null : extraCostUsd(price, repeated, 'explicit', turn));
        }
        total.addMicro(money.microUsd, money.items, money.unpriced);
        again += tokens;
        found.push({
          model: first.model,
          ts: first.ts,
          turns: group.length,
          sessions: new Set(group.map((t) => t.sessionId)).size,
          requestIds: group.map((t) => t.requestId),
          writtenOnceTokens: first.write,
          writtenAgainTokens: tokens,
          cost: money.priced,
        });
      }
      i = j;
    }
  }
  found.sort((a, b) => b.writtenAgainTokens - a.writtenAgainTokens || a.ts - b.ts);
  return { fanOuts: found.slice(0, limit), fanOutCount: found.length, writtenAgainTokens: again, cost: total.priced, advice: FANOUT_ADVICE };
}
