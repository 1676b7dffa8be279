// Step 1 of a write, whatever the store: every event joined into its turn with
// the core's mergeEvent, in memory, against the stored row of its request.
import { mergeEvent, toTurn, type TurnParts } from '../../core/join.js';
import type { CacheEvent, Turn } from '../../core/types.js';
import { rowToParts, storedMessageHashes, type TurnRow } from '../sqlite/rows.js';
import type { BatchCounts, EventRejection } from '../store.js';
import type { Names } from './names.js';

/** A turn this write changes. */
export interface Staged {
  projectId: number;
  requestId: string;
  /** The stored row before this write; undefined for a new turn. */
  row: TurnRow | undefined;
  parts: TurnParts;
  snapshotChanged: boolean;
  usageChanged: boolean;
  originChanged: boolean;
  streamId: number | null;
  turn: Turn | undefined;
}

export interface StagingStore {
  names: Names;
  /** The stored row of a request, if any. */
  find(projectId: number, requestId: string): TurnRow | undefined;
  /** The id of a stream, created when new. */
  stream(projectId: number, sessionId: string, agentId: string): number;
}

/** The key of a request's turn in a write's staged map. */
export function stagedKey(projectId: number, requestId: string): string {
  return `${projectId}\u0000${requestId}`;
}

/** The stream a turn's parts name, if they name a session yet. */
export function streamNameOf(parts: TurnParts): { sessionId: string; agentId: string } | undefined {
  const sessionId = parts.snapshot?.sessionId ?? parts.usage?.sessionId;
  if (sessionId === undefined) return undefined;
  return { sessionId, agentId: parts.snapshot?.agentId ?? parts.usage?.agentId ?? 'main' };
}

/** Joins a batch's events into `staged`; returns the batch's counts. */
export function stageBatch(
  projectId: number,
  events: readonly CacheEvent[],
  staged: Map<string, Staged>,
  store: StagingStore,
): BatchCounts {
  let accepted = 0;
  let duplicates = 0;
  const rejected: EventRejection[] = [];
  for (const [index, event] of events.entries()) {
    const key = stagedKey(projectId, event.requestId);
    let s = staged.get(key);
    if (!s) {
      const row = store.find(projectId, event.requestId);
      const parts = row ? rowToParts(row, store.names) : { requestId: event.requestId };
      s = { projectId, requestId: event.requestId, row, parts, snapshotChanged: false, usageChanged: false, originChanged: false, streamId: null, turn: undefined };
    }
    // A request id is unique within a project (SPEC §1): one of another session is a conflict, never an overwrite.
    const session = s.parts.snapshot?.sessionId ?? s.parts.usage?.sessionId;
    if (event.sessionId !== undefined && session !== undefined && event.sessionId !== session) {
      rejected.push({ event: index, field: 'requestId', problem: `already names a turn of session "${session}", not "${event.sessionId}": request ids must be unique within a project` });
      continue;
    }
    const { parts, duplicate } = mergeEvent(s.parts, event);
    // A repeat of a known call that only names where it came from (a span after its log record) is still a duplicate, and its origin is kept.
    const originOnly = duplicate && parts.origin !== s.parts.origin;
    if (duplicate) duplicates++;
    else accepted++;
    if (duplicate && !originOnly) continue;
    if (parts.snapshot !== s.parts.snapshot && parts.snapshot) {
      const { messageHashes } = parts.snapshot.prefix;
      const prefix = messageHashes ? { ...parts.snapshot.prefix, messageHashes: storedMessageHashes(messageHashes) } : parts.snapshot.prefix;
      parts.snapshot = { ...parts.snapshot, prefix: store.names.intern(prefix) };
    }
    s.snapshotChanged ||= parts.snapshot !== s.parts.snapshot;
    s.usageChanged ||= parts.usage !== s.parts.usage;
    s.originChanged ||= parts.origin !== s.parts.origin;
    s.parts = parts;
    const name = streamNameOf(parts);
    s.streamId = name ? store.stream(projectId, name.sessionId, name.agentId) : null;
    s.turn = s.streamId === null ? undefined : toTurn(parts);
    staged.set(key, s);
  }
  return rejected.length > 0 ? { accepted, duplicates, rejected } : { accepted, duplicates };
}
