// SPEC §4.4 and §4.6: every change between the baseline's prefix and the
// turn's, each at its position in the prefix. Only changes inside the
// baseline's cached prefix explain a miss; the others are listed apart.
import { changedToolNames, diffBlocks, diffCutTools, diffTools, firstRewrittenIndex, NO_TOOL_CHANGES } from './diff.js';
import { modelFamily } from './family.js';
import { isMessagePosition, messageAt, messageIndexOf, readMarker, START, systemAt, TOOLS, type Marker } from './position.js';
import { type ChangeReason, type Prefix, type ToolChanges, type Turn } from './types.js';

/** Content blocks a lookup walks back over before it gives up (Anthropic, Bedrock, DashScope: see caching.ts). */
export const LOOKBACK_BLOCKS = 20;

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
  /** The markers on messages by position (the last one listed at a position). */
  byPosition: ReadonlyMap<number, Marker>;
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
      byPosition: new Map(list.flatMap((m) => (m.position !== null && isMessagePosition(m.position) ? [[m.position, m] as const] : []))),
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
 * Content blocks from the end of message p to the end of message q (p ≤ q),
 * by the newer prompt's block counts: entries when they are not known.
 */
export function blocksBetween(prefix: Prefix, p: number, q: number): number {
  const counts = prefix.messageBlockCounts;
  if (counts === undefined) return q - p;
  let blocks = 0;
  for (let i = p + 1; i <= q; i++) blocks += counts[i] ?? 1;
  return blocks;
}

/**
 * SPEC §4.12: the breakpoint of `after` whose lookup reaches the baseline's
 * last breakpoint on a message (p): the first message marker q with p ≤ q
 * and at most `limit` content blocks from p to q (null: no limit). Null when
 * none reaches it; undefined when the question does not arise (the
 * baseline's last marker is not on a message, or either side's message
 * markers are unknown).
 */
export function reachingMarker(before: Prefix, after: Prefix, limit: number | null): Marker | null | undefined {
  const p = markersOf(before).lastOnMessage;
  const later = markersOf(after);
  if (p === undefined || later.onMessages.length === 0) return undefined;
  let reaching: number | undefined;
  for (const q of later.onMessages) if (q >= p && (reaching === undefined || q < reaching)) reaching = q;
  if (reaching === undefined) return null;
  if (limit !== null && blocksBetween(after, messageIndexOf(p), messageIndexOf(reaching)) > limit) return null;
  return later.byPosition.get(reaching) ?? null;
}

/**
 * Content blocks from the baseline's last breakpoint on a message to the
 * turn's first one at or after it; null when the turn has none there,
 * undefined when either side's message markers are unknown.
 */
export function lookbackGap(before: Prefix, after: Prefix): number | null | undefined {
  const reaching = reachingMarker(before, after, null);
  if (!reaching) return reaching;
  return blocksBetween(after, messageIndexOf(markersOf(before).lastOnMessage!), messageIndexOf(reaching.position!));
}

/**
 * SPEC §4.12: markers are not part of the cache key. Adding, removing or
 * moving one writes an entry elsewhere, which is the lookback's question,
 * not a change of the prefix. Only a marker re-timed (its TTL or another
 * setting) counts: the same location inside the cached prefix with other
 * settings, or the breakpoint that reaches the baseline's last one with
 * settings other than that one's. Returns the first such position.
 */
function markerChange(before: Prefix, after: Prefix, end: number, limit: number | null): number | undefined {
  const was = markersOf(before);
  const now = markersOf(after);
  // Markers unknown on one side (an empty list means unknown): only the settings can tell.
  if (was.byLocation.size === 0 || now.byLocation.size === 0) {
    const neither = was.byLocation.size === 0 && now.byLocation.size === 0;
    return settingsDiffer(before, after, !neither) ? INSIDE : undefined;
  }
  let first = settingsDiffer(before, after, true) ? INSIDE : undefined;
  const retimed = (position: number) => {
    if (position <= end && (first === undefined || position < first)) first = position;
  };
  for (const [location, b] of was.byLocation) {
    const c = now.byLocation.get(location);
    if (c !== undefined && b.settings !== c.settings) retimed(b.position ?? INSIDE);
  }
  const last = was.lastOnMessage;
  const reaching = reachingMarker(before, after, limit);
  if (last !== undefined && reaching) {
    const cached = was.byPosition.get(last)!;
    if (cached.settings !== reaching.settings) retimed(last);
  }
  return first;
}

/**
 * SPEC §4.12: no breakpoint of `after` reaches the baseline's last one, while
 * the messages up to it are unchanged (else their rewrite is the cause).
 */
function lookbackExceeded(before: Prefix, after: Prefix, limit: number | null, rewrittenAt: number | null): boolean {
  if (!before.messageHashes || !after.messageHashes) return false;
  const p = markersOf(before).lastOnMessage;
  if (p === undefined || (rewrittenAt !== null && rewrittenAt <= messageIndexOf(p))) return false;
  return reachingMarker(before, after, limit) === null;
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
export function attribute(baseline: Compared, current: Compared, explicit: boolean, lookbackBlocks: number | null = LOOKBACK_BLOCKS): Attribution {
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
  // A marker never outranks a change of the content: it is checked after every one.
  const limit = explicit ? lookbackBlocks : null;
  const marker = markerChange(before, after, end, limit);
  if (marker !== undefined) place('cache_control_changed', marker);
  if (explicit && lookbackExceeded(before, after, limit, found.firstChangedMessageIndex)) place('breakpoint_lookback_exceeded', INSIDE);
  return found;
}
