// A turn's idle gap (core/insights/ttl.ts defines it) as a write keeps it,
// whatever the store: three columns on the turn's row and its share of
// gap_rollups, changed exactly like rollups (what a turn counted before out,
// what it counts now in).
import type { History } from '../../core/history.js';
import { GAP_BUCKETS, hasGap, ONE_HOUR, turnGap } from '../../core/insights/ttl.js';
import { compareTurns } from '../../core/stream.js';
import type { Turn } from '../../core/types.js';
import type { Contribution, TurnRow } from '../sqlite/rows.js';

/**
 * The meta key `gaps` holds this once every stored turn's gap is in
 * gap_rollups: a database from before them is evaluated again once to build them.
 */
export const GAPS_VERSION = '1';

/** A turn's gap as stored: gap_bucket (GAP_BUCKETS index), gap_stake, gap_rewritten; nulls for a turn without one. */
export type GapColumns = [number | null, number | null, number | null];
export const NO_GAP: GapColumns = [null, null, null];

/** The columns of a gap_rollups key, and of its sums, in order. */
export const GAP_KEY = ['project_id', 'hour', 'stream_id', 'model_id', 'provider_id', 'bucket'] as const;
export const GAP_SUMS = ['turns', 'stake', 'rewritten', 'written', 'written_1h'] as const;

/** A gap_rollups row's change: its key (GAP_KEY order) and what its sums (GAP_SUMS order) gain. */
export interface GapChange {
  key: number[];
  sums: number[];
}

/** The gaps of a stream's turns in order, each from the last earlier turn that reported cache usage. */
export class GapMeter {
  private previous: Turn | undefined;

  /** Starts after `history`: the turn the first gap is measured from is its last measured turn, settled or in flight. */
  constructor(history: History) {
    for (const seen of [history.latest, ...history.pending]) {
      if (seen?.candidate && (this.previous === undefined || compareTurns(seen.turn, this.previous) > 0)) this.previous = seen.turn;
    }
  }

  /** The next turn's gap columns; a turn not evaluated (`state` null) or without cache usage has none. */
  next(turn: Turn, state: number | null): GapColumns {
    if (state === null || !hasGap(turn)) return NO_GAP;
    const gap = turnGap(this.previous, turn);
    this.previous = turn;
    return [GAP_BUCKETS.indexOf(gap.bucket), gap.stake, gap.rewritten];
  }
}

/** The gap columns stored on a row. */
export function storedGap(row: TurnRow): GapColumns {
  return [row.gap_bucket, row.gap_stake, row.gap_rewritten];
}

export function sameGap(a: GapColumns, b: GapColumns): boolean {
  return a[0] === b[0] && a[1] === b[1] && a[2] === b[2];
}

/** Changes to gap_rollups, grouped so that each key is written once per write. */
export class GapDeltas {
  private readonly changes = new Map<string, GapChange>();

  /** A turn's gap counted in (1) or out (-1), under its contribution's project, stream, model and provider. */
  add(c: Contribution, ts: number, gap: GapColumns, written: number, written1h: number, sign: 1 | -1): void {
    const [bucket, stake, rewritten] = gap;
    if (bucket === null) return;
    const key = [c.projectId, Math.floor(ts / ONE_HOUR), c.streamId, c.modelId, c.providerId, bucket];
    const id = key.join('\u0000');
    let entry = this.changes.get(id);
    if (!entry) this.changes.set(id, (entry = { key, sums: [0, 0, 0, 0, 0] }));
    [1, stake ?? 0, rewritten ?? 0, written, written1h].forEach((value, i) => (entry.sums[i]! += sign * value));
  }

  /** The keys whose sums change; a change whose turns go below 0 may leave a row of no turns, which the store drops. */
  *all(): Generator<GapChange> {
    for (const change of this.changes.values()) if (change.sums.some((v) => v !== 0)) yield change;
  }
}
