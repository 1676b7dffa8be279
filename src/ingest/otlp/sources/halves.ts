// The halves of a join whose other half may reach another process: a Claude
// Code request body's hashes and the request id its response body names; a
// Gemini CLI or Qwen Code call's two log records, `api_request` (its
// messages) and `api_response` (its usage), paired by stream and start time;
// a call known from those records and the prefix parts of its span (calls.ts).
// The OTLP receiver pairs them through the store (Store.pairHalf), so that
// any node of a cluster completes the call; a context that keeps its halves
// in memory (one file followed by `tail`, one test) pairs them in its own
// tables, the same way: the half that comes second takes the first.
import type { CacheEvent } from '../../../core/types.js';

export type HalfKind = 'claude_request_bodies' | 'claude_request_ids' | 'request_halves' | 'response_halves' | 'span_calls' | 'span_prefixes';

/** What a record, or a join, brings: events now, and halves that wait for their other half. */
export interface Joined {
  events: CacheEvent[];
  halves: Half[];
}

export interface Half {
  /** What it waits under; its other half waits under the same key, or one of `partnerKeys`. */
  key: string;
  /** The table it waits in. */
  kind: HalfKind;
  /** What the join needs from this half: hashes and ids, never content (stored as JSON). */
  value: unknown;
  /** The keys its other half may wait under, when not `key` alone (a half paired by time: calls.ts). */
  partnerKeys?: string[];
  /** Which of the other halves waiting under those keys is its own (an index; -1 for none). Without it: the oldest. */
  choose?(waiting: readonly unknown[]): number;
  /** The join's events and further halves, given the other half's value. */
  join(other: unknown): Joined;
  /** What it brings while it waits, when that is more than nothing. */
  unpaired?(): Joined;
  /** Pairs it in the mapping context's own tables: the join's events (or what it brings unpaired), with its further halves paired too. */
  pairInMemory(): CacheEvent[];
}

/** A join's events, with its further halves paired in memory. */
export function inMemory(joined: Joined): CacheEvent[] {
  return [...joined.events, ...joined.halves.flatMap((half) => half.pairInMemory())];
}
