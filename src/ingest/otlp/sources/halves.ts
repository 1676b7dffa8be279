// The halves of a join whose other half may reach another process: a Claude
// Code request body's hashes and the request id its response body names; a
// call known from Gemini CLI's or Qwen Code's log records and the prefix
// parts of its span (calls.ts).
// The OTLP receiver pairs them through the store (Store.pairHalf), so that
// any node of a cluster completes the call; a context that keeps its halves
// in memory (one file followed by `tail`, one test) pairs them in its own
// tables, the same way: the half that comes second takes the first.
import type { CacheEvent } from '../../../core/types.js';

export type HalfKind = 'claude_request_bodies' | 'claude_request_ids' | 'span_calls' | 'span_prefixes';

export interface Half {
  /** Both halves of one join share it. */
  key: string;
  /** The table it waits in. */
  kind: HalfKind;
  /** What the join needs from this half: hashes and ids, never content (stored as JSON). */
  value: unknown;
  /** The join's events, given the other half's value. */
  join(other: unknown): CacheEvent[];
  /** Pairs it in the mapping context's own tables: the join's events, or none while it waits. */
  pairInMemory(): CacheEvent[];
}
