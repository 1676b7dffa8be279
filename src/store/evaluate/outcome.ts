// What a store's writer is given and gives back, whatever the store: batches
// by project id, and what changed by project id, named for the caller.
import type { CacheEvent } from '../../core/types.js';
import type { BatchCounts, ExternalBreak, TailCheckpoint, TokenPoint, WriteResult } from '../store.js';
import type { Changes } from './apply.js';

/** One request's events, for one project. */
export interface WriterBatch {
  projectId: number;
  events: readonly CacheEvent[];
  tokenPoints?: readonly TokenPoint[] | undefined;
  externalBreaks?: readonly ExternalBreak[] | undefined;
  checkpoint?: TailCheckpoint | undefined;
}

/** What one write did: counts per batch, and what changed for logs and counters. */
export interface WriterOutcome extends Changes {
  counts: BatchCounts[];
  externalBreaks: { projectId: number; record: ExternalBreak }[];
}

/** A writer's outcome with project names (`names`: by project id) instead of ids. */
export function writeResult(outcome: WriterOutcome, names: ReadonlyMap<number, string>): WriteResult {
  const named = <T extends { projectId: number }>(list: T[]) => list.map(({ projectId, ...rest }) => ({ project: names.get(projectId)!, ...rest }));
  return {
    counts: outcome.counts,
    breaks: named(outcome.breaks),
    revisedBreaks: named(outcome.revisedBreaks),
    observed: outcome.observed.map(({ projectId, turn }) => ({ project: names.get(projectId)!, ...turn })),
    externalBreaks: named(outcome.externalBreaks),
  };
}
