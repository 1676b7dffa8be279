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
//   write it could have shared with the first: tools, system and the leading
//   messages equal to the first's, not its own messages. With a size estimate
//   (prefixChars, from raw request bodies) its write is split between the
//   shared part and its own in proportion to their characters:
//     min(its write, the first's write, round(its write × shared / whole)),
//   shared = tools, system and the messages in common, whole = its prefix.
//   Without one (hash-only events) it is min(its write, the first's write),
//   which counts its own messages too.
//   Had it waited for the first's first token it would have read those
//   tokens: the cost is what writing them cost beyond reading them, at the
//   turn's price (core/prices.ts extraCostUsd), unpriced models counted apart.
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
  /** Message hashes in one form for all turns (the store's); null when unknown. */
  messageHashes: readonly string[] | null;
  /** Prefix.prefixChars; null without a size estimate. */
  prefixChars: readonly number[] | null;
}

/** Leading messages of `turn` equal to the first's. */
function commonMessages(first: readonly string[], turn: readonly string[]): number {
  let n = 0;
  while (n < first.length && n < turn.length && first[n] === turn[n]) n++;
  return n;
}

/** What a later turn of a fan-out wrote of what it could have shared with the first (see the definitions above). */
export function writtenAgain(first: ColdTurn, turn: ColdTurn): number {
  const repeated = Math.min(turn.write, first.write);
  const chars = turn.prefixChars;
  if (chars === null || first.messageHashes === null || turn.messageHashes === null || chars.length !== turn.messageHashes.length + 1) return repeated;
  const whole = chars[chars.length - 1]!;
  if (whole === 0) return repeated;
  const shared = chars[commonMessages(first.messageHashes, turn.messageHashes)]!;
  return Math.min(repeated, Math.round((turn.write * shared) / whole));
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
          const repeated = writtenAgain(first, turn);
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
