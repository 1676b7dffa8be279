// Which models get series of their own in /metrics. Model and provider are
// label values that clients choose: kept for every string sent, they would
// grow the exposition (and memory) without end. Per project, the `max` most
// used (model, provider) pairs keep their own series; every other pair is
// counted as model="other", provider="other", so totals stay whole.
//
// Use is counted in turns. A pair that arrives once `max` are kept waits as a
// candidate (at most `max` of them, the least used making room), and is
// promoted once it has more turns than the least used kept pair, which is then
// demoted: its series are folded into "other". A counter never goes down: a
// promoted pair's series start from its promotion, its turns before it stay in
// "other".

export const OTHER = 'other';

/** A (model, provider) pair, as one key. */
export type Pair = string;

export function pairOf(model: string, provider: string): Pair {
  return `${model}\u0000${provider}`;
}

interface Tally {
  kept: Map<Pair, number>;
  candidates: Map<Pair, number>;
}

export interface Placement {
  /** Whether the pair has series of its own; else it is counted as "other". */
  kept: boolean;
  /** A pair that lost its place to this one: its series are to be folded into "other". */
  demoted?: Pair;
}

/** The entry with the fewest uses (the oldest of equals: maps keep insertion order). */
function leastUsed(map: Map<Pair, number>): [Pair, number] | undefined {
  let least: [Pair, number] | undefined;
  for (const entry of map) if (least === undefined || entry[1] < least[1]) least = entry;
  return least;
}

export class TopModels {
  private readonly projects = new Map<string, Tally>();

  constructor(private readonly max: number) {}

  /** Where `turns` more uses of a pair are counted (0 for a count that is not turns). */
  place(project: string, pair: Pair, turns: number): Placement {
    let tally = this.projects.get(project);
    if (!tally) {
      tally = { kept: new Map(), candidates: new Map() };
      this.projects.set(project, tally);
    }
    const { kept, candidates } = tally;
    const uses = kept.get(pair);
    if (uses !== undefined) {
      kept.set(pair, uses + turns);
      return { kept: true };
    }
    if (kept.size < this.max) {
      kept.set(pair, turns);
      return { kept: true };
    }
    const count = (candidates.get(pair) ?? 0) + turns;
    if (!candidates.has(pair) && candidates.size >= this.max) candidates.delete(leastUsed(candidates)![0]);
    candidates.set(pair, count);
    const [demoted, least] = leastUsed(kept)!;
    if (count <= least) return { kept: false };
    candidates.delete(pair);
    kept.delete(demoted);
    kept.set(pair, count);
    // It may come back, if it is used again.
    candidates.set(demoted, least);
    return { kept: true, demoted };
  }
}
