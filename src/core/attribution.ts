// SPEC §4.4 and §4.6: every change between the baseline's prefix and the
// turn's, each at its position in the prefix. Only changes inside the
// baseline's cached prefix explain a miss; the others are listed apart.
import { changedToolNames, diffBlocks, diffTools, firstRewrittenIndex, NO_TOOL_CHANGES } from './diff.js';
import { modelFamily } from './family.js';
import { isMessagePosition, messageAt, readMarker, START, systemAt, TOOLS, type Marker } from './position.js';
import { CHANGE_REASONS, type ChangeReason, type Prefix, type ToolChanges, type Turn } from './types.js';

/** Breakpoints a lookup walks back over before it gives up (Anthropic, DashScope). */
export const LOOKBACK_ENTRIES = 20;

/** A change with no position (known only from hashes) counts as inside the cached prefix. */
const INSIDE = -1;

export interface Attribution {
  /** Changes inside the cached prefix, in prefix order. */
  reasons: ChangeReason[];
  /** Changes after it, in prefix order. */
  after: ChangeReason[];
  toolChanges: ToolChanges;
  changedToolNames: string[];
  changedSystemBlocks: number[] | null;
  firstChangedMessageIndex: number | null;
  changedParams: string[];
}

/** A turn's prefix, and its model, which is also known without a snapshot (from its usage). */
export type Compared = Pick<Turn, 'prefix' | 'model'>;

const markersOf = (prefix: Prefix) => (prefix.markers ?? []).map(readMarker);

/** The last marker's position, when the prefix has a marker on a message (SPEC §4.12). */
function lastMessageMarker(markers: readonly Marker[]): number | undefined {
  let last: number | undefined;
  for (const m of markers) {
    if (m.position !== null && isMessagePosition(m.position) && (last === undefined || m.position > last)) last = m.position;
  }
  return last;
}

/**
 * SPEC §4.4: where the baseline's cached prefix ends. With explicit caching
 * and a marker on a message, at its last marker; else at the end of its
 * prompt when its messages are known; else nowhere (everything is inside).
 */
function boundaryOf(baseline: Prefix, explicit: boolean): { end: number; byMarker: boolean } {
  const last = explicit ? lastMessageMarker(markersOf(baseline)) : undefined;
  if (last !== undefined) return { end: last, byMarker: true };
  if (baseline.messageHashes) return { end: messageAt(baseline.messageHashes.length - 1), byMarker: false };
  return { end: Infinity, byMarker: false };
}

/**
 * SPEC §4.12: a marker added, removed or re-timed strictly inside the cached
 * prefix, or re-timed at the baseline's last marker, is a change; markers
 * after it (the usual marker on the newest message advancing) are not.
 */
function markerChange(before: Prefix, after: Prefix, boundary: { end: number; byMarker: boolean }): number | undefined {
  const was = new Map(markersOf(before).map((m) => [m.location, m]));
  const now = new Map(markersOf(after).map((m) => [m.location, m]));
  if (was.size === 0 || now.size === 0) {
    // Markers unknown on one side: only the settings' hashes can tell.
    return before.cacheControlHash !== undefined && after.cacheControlHash !== undefined && before.cacheControlHash !== after.cacheControlHash
      ? INSIDE
      : undefined;
  }
  let first: number | undefined;
  const note = (position: number) => (first = first === undefined ? position : Math.min(first, position));
  for (const location of new Set([...was.keys(), ...now.keys()])) {
    const b = was.get(location);
    const c = now.get(location);
    const position = (b ?? c)!.position ?? INSIDE;
    if (position > boundary.end) continue;
    const retimed = b !== undefined && c !== undefined && b.settings !== c.settings;
    if (boundary.byMarker && position === boundary.end ? retimed : retimed || (b === undefined) !== (c === undefined)) note(position);
  }
  if (before.cacheControlHash !== undefined && after.cacheControlHash !== undefined && before.cacheControlHash !== after.cacheControlHash) {
    note(INSIDE);
  }
  return first;
}

/** SPEC §4.12: p is the baseline's last marker (on a message); C must have a message marker q with p ≤ q ≤ p + 20. */
function lookbackExceeded(before: Prefix, after: Prefix): boolean {
  if (!before.messageHashes || !after.messageHashes) return false;
  const p = lastMessageMarker(markersOf(before));
  if (p === undefined) return false;
  const later = markersOf(after).flatMap((m) => (m.position !== null && isMessagePosition(m.position) ? [m.position] : []));
  if (!later.some((q) => q > p)) return false;
  return !later.some((q) => q >= p && q - p <= LOOKBACK_ENTRIES);
}

function changedParams(before: Prefix, after: Prefix): string[] {
  if (!before.params || !after.params) return [];
  const keys = new Set([...Object.keys(before.params), ...Object.keys(after.params)]);
  return [...keys].filter((key) => before.params![key] !== after.params![key]).sort();
}

/** Every change between the two prefixes (comparing only what both carry), split by the baseline's cached prefix. */
export function attribute(baseline: Compared, current: Compared, explicit: boolean): Attribution {
  const found: Attribution = {
    reasons: [],
    after: [],
    toolChanges: NO_TOOL_CHANGES,
    changedToolNames: [],
    changedSystemBlocks: null,
    firstChangedMessageIndex: null,
    changedParams: [],
  };
  const positions = new Map<ChangeReason, number>();
  if (baseline.model !== undefined && current.model !== undefined && modelFamily(baseline.model) !== modelFamily(current.model)) {
    positions.set('model_changed', START);
  }
  const before = baseline.prefix;
  const after = current.prefix;
  if (before && after) {
    if (before.tools && after.tools && before.toolsHash !== after.toolsHash) {
      const changes = diffTools(before.tools, after.tools);
      if (changes.added.length + changes.removed.length + changes.schemaChanged.length > 0) positions.set('tools_schema_changed', TOOLS);
      if (changes.moved.length > 0) positions.set('tools_order_changed', TOOLS);
      found.toolChanges = changes;
      found.changedToolNames = changedToolNames(changes);
    }
    if (before.systemHash !== undefined && after.systemHash !== undefined && before.systemHash !== after.systemHash) {
      let block = 0;
      if (before.systemBlockHashes && after.systemBlockHashes) {
        found.changedSystemBlocks = diffBlocks(before.systemBlockHashes, after.systemBlockHashes);
        block = found.changedSystemBlocks[0] ?? 0;
      }
      positions.set('system_changed', systemAt(block));
    }
    const boundary = boundaryOf(before, explicit);
    const marker = markerChange(before, after, boundary);
    if (marker !== undefined) positions.set('cache_control_changed', marker);
    found.changedParams = changedParams(before, after);
    // Anthropic: thinking and tool_choice invalidate the message blocks, not tools or system.
    if (found.changedParams.length > 0) positions.set('request_params_changed', messageAt(0));
    if (before.messageHashes && after.messageHashes) {
      const index = firstRewrittenIndex(before.messageHashes, after.messageHashes);
      if (index !== null) {
        found.firstChangedMessageIndex = index;
        positions.set('messages_rewritten', messageAt(index));
      }
    }
    if (explicit && lookbackExceeded(before, after)) positions.set('breakpoint_lookback_exceeded', INSIDE);
    for (const reason of CHANGE_REASONS) {
      const position = positions.get(reason);
      if (position === undefined) continue;
      (position <= boundary.end ? found.reasons : found.after).push(reason);
    }
    return found;
  }
  if (positions.has('model_changed')) found.reasons.push('model_changed');
  return found;
}
