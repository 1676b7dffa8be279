// SPEC §4.4 and §4.6: every change between the baseline's prefix and the
// turn's, each at its position in the prefix. Only changes inside the
// baseline's cached prefix explain a miss; the others are listed apart.
import { changedToolNames, diffBlocks, diffCutTools, diffTools, firstRewrittenIndex, NO_TOOL_CHANGES } from './diff.js';
import { modelFamily } from './family.js';
import { isMessagePosition, messageAt, readMarker, START, systemAt, TOOLS, type Marker } from './position.js';
import { type ChangeReason, type Prefix, type ToolChanges, type Turn } from './types.js';

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

/** A prefix's markers by location, read once per prefix (stream turns share their prefix objects). */
interface Markers {
  byLocation: ReadonlyMap<string, Marker>;
  /** The last marker's position when one sits on a message (SPEC §4.12). */
  lastOnMessage: number | undefined;
  /** Positions of the markers on messages. */
  onMessages: readonly number[];
}

const read = new WeakMap<Prefix, Markers>();

function markersOf(prefix: Prefix): Markers {
  let markers = read.get(prefix);
  if (markers === undefined) {
    const list = (prefix.markers ?? []).map(readMarker);
    const onMessages = list.flatMap((m) => (m.position !== null && isMessagePosition(m.position) ? [m.position] : []));
    markers = {
      byLocation: new Map(list.map((m) => [m.location, m])),
      lastOnMessage: onMessages.length > 0 ? Math.max(...onMessages) : undefined,
      onMessages,
    };
    read.set(prefix, markers);
  }
  return markers;
}

/**
 * SPEC §4.4: where the baseline's cached prefix ends. With explicit caching
 * and a marker on a message, at its last marker; else at the end of its
 * prompt when its messages are known; else nowhere (everything is inside).
 */
function cachedPrefixEnd(baseline: Prefix, explicit: boolean): number {
  const last = explicit ? markersOf(baseline).lastOnMessage : undefined;
  if (last !== undefined) return last;
  // A cut message list does not say where the prompt ended.
  if (baseline.messageHashes && baseline.partial !== 'messages') return messageAt(baseline.messageHashes.length - 1);
  return Infinity;
}

/** A difference known only from hashes, or from a declared TTL where no marker is known: it has no position. */
function settingsDiffer(before: Prefix, after: Prefix, markersKnown: boolean): boolean {
  if (before.cacheControlHash !== undefined && after.cacheControlHash !== undefined && before.cacheControlHash !== after.cacheControlHash) {
    return true;
  }
  return !markersKnown && before.ttlMs !== undefined && after.ttlMs !== undefined && before.ttlMs !== after.ttlMs;
}

/**
 * SPEC §4.12: a marker added, removed or re-timed strictly inside the cached
 * prefix, or re-timed at the baseline's last marker on a message, is a
 * change; markers after it, and the last marker advancing to the newest
 * message, are not. Returns the first change's position.
 */
function markerChange(before: Prefix, after: Prefix, end: number): number | undefined {
  const was = markersOf(before);
  const now = markersOf(after).byLocation;
  // Markers unknown on one side (an empty list means unknown): only the settings can tell.
  if (was.byLocation.size === 0 || now.size === 0) {
    const neither = was.byLocation.size === 0 && now.size === 0;
    return settingsDiffer(before, after, !neither) ? INSIDE : undefined;
  }
  let first = settingsDiffer(before, after, true) ? INSIDE : undefined;
  const consider = (b: Marker | undefined, c: Marker | undefined) => {
    const position = (b ?? c)!.position ?? INSIDE;
    if (position > end) return;
    const retimed = b !== undefined && c !== undefined && b.settings !== c.settings;
    const changed = position === was.lastOnMessage ? retimed : retimed || b === undefined || c === undefined;
    if (changed && (first === undefined || position < first)) first = position;
  };
  for (const [location, b] of was.byLocation) consider(b, now.get(location));
  for (const [location, c] of now) if (!was.byLocation.has(location)) consider(undefined, c);
  return first;
}

/** SPEC §4.12: p is the baseline's last marker (on a message); C must have a message marker q with p ≤ q ≤ p + 20. */
function lookbackExceeded(before: Prefix, after: Prefix): boolean {
  if (!before.messageHashes || !after.messageHashes) return false;
  const p = markersOf(before).lastOnMessage;
  if (p === undefined) return false;
  const later = markersOf(after).onMessages;
  if (!later.some((q) => q > p)) return false;
  return !later.some((q) => q >= p && q - p <= LOOKBACK_ENTRIES);
}

function changedParams(before: Prefix, after: Prefix): string[] {
  if (!before.params || !after.params) return [];
  const keys = new Set([...Object.keys(before.params), ...Object.keys(after.params)]);
  return [...keys].filter((key) => before.params![key] !== after.params![key]).sort();
}

/**
 * Every change between the two prefixes (comparing only what both carry, and
 * of a list cut short only its known entries: CutPlace), split by the
 * baseline's cached prefix.
 */
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
  const before = baseline.prefix;
  const after = current.prefix;
  const end = before && after ? cachedPrefixEnd(before, explicit) : Infinity;
  // Checked in prefix order (CHANGE_REASONS), so each list comes out in it.
  const place = (reason: ChangeReason, position: number) => (position <= end ? found.reasons : found.after).push(reason);
  if (baseline.model !== undefined && current.model !== undefined && modelFamily(baseline.model) !== modelFamily(current.model)) {
    place('model_changed', START);
  }
  if (!before || !after) return found;
  if (before.tools && after.tools && before.toolsHash !== after.toolsHash) {
    const [beforeCut, afterCut] = [before.partial === 'tools', after.partial === 'tools'];
    const changes = beforeCut || afterCut ? diffCutTools(before.tools, after.tools, beforeCut, afterCut) : diffTools(before.tools, after.tools);
    if (changes.added.length + changes.removed.length + changes.schemaChanged.length > 0) place('tools_schema_changed', TOOLS);
    if (changes.moved.length > 0) place('tools_order_changed', TOOLS);
    found.toolChanges = changes;
    found.changedToolNames = changedToolNames(changes);
  }
  if (before.systemHash !== undefined && after.systemHash !== undefined && before.systemHash !== after.systemHash) {
    let block = 0;
    if (before.systemBlockHashes && after.systemBlockHashes) {
      found.changedSystemBlocks = diffBlocks(before.systemBlockHashes, after.systemBlockHashes);
      block = found.changedSystemBlocks[0] ?? 0;
    }
    place('system_changed', systemAt(block));
  }
  const marker = markerChange(before, after, end);
  if (marker !== undefined) place('cache_control_changed', marker);
  found.changedParams = changedParams(before, after);
  // Anthropic: thinking and tool_choice invalidate the message blocks, not tools or system.
  if (found.changedParams.length > 0) place('request_params_changed', messageAt(0));
  if (before.messageHashes && after.messageHashes) {
    // A cut current list says nothing of the messages past its cut.
    const known = after.partial === 'messages' ? before.messageHashes.slice(0, after.messageHashes.length) : before.messageHashes;
    const index = firstRewrittenIndex(known, after.messageHashes);
    if (index !== null) {
      found.firstChangedMessageIndex = index;
      place('messages_rewritten', messageAt(index));
    }
  }
  if (explicit && lookbackExceeded(before, after)) place('breakpoint_lookback_exceeded', INSIDE);
  return found;
}
