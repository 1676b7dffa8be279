// Reduces a snapshot to what detection compares, computing the aggregates once
// so that unchanged prefixes compare in O(1).
import { parseDuration } from './duration.js';
import { hashString, hashValue } from './hash.js';
import { normalizeMarker, readMarker } from './position.js';
import type { CacheControl, Prefix, SnapshotContent, ToolRef } from './types.js';

/** Anthropic's default, and what a marker without a TTL means when the request names none (SPEC §4.12). */
export const DEFAULT_MARKER_TTL = '5m';

/** One hash over the names, schema hashes and order of a tool list. */
export function hashToolList(tools: readonly ToolRef[]): string {
  let joined = '';
  for (const tool of tools) joined += tool.name + '\u0000' + tool.schemaHash + '\u0001';
  return hashString(joined);
}

/**
 * Cache settings repeat on every turn of a stream: their canonical hash is
 * remembered by their plain JSON (bounded, so it cannot grow).
 */
const settingsHashes = new Map<string, string>();

function hashSettings(settings: CacheControl): string {
  const plain = JSON.stringify(settings);
  let hash = settingsHashes.get(plain);
  if (hash === undefined) {
    if (settingsHashes.size >= 4096) settingsHashes.clear();
    hash = hashValue(settings);
    settingsHashes.set(plain, hash);
  }
  return hash;
}

/**
 * What of cache_control no marker says: whether caching is on, and the cache
 * key. Scope and TTL follow the markers (or, without markers, the declared
 * TTL, kept as `ttlMs`), so they are compared as markers.
 */
function settingsOf(control: CacheControl): CacheControl {
  const settings: CacheControl = {};
  if (control.enabled !== undefined) settings.enabled = control.enabled;
  if (control.key !== undefined) settings.key = control.key;
  return settings;
}

/** Hashes of the cache-relevant request parameters, or undefined when the snapshot says nothing of them. */
function paramsOf(snapshot: SnapshotContent): Record<string, string> | undefined {
  const { thinking, thinkingHash, toolChoice, toolChoiceHash, params } = snapshot;
  if (thinking === undefined && thinkingHash === undefined && toolChoice === undefined && toolChoiceHash === undefined && params === undefined) {
    return undefined;
  }
  const hashes: Record<string, string> = {};
  for (const [key, value] of Object.entries(params ?? {})) if (value !== undefined) hashes[key] = hashValue(value);
  const thinkingValue = thinkingHash ?? (thinking === undefined ? undefined : hashValue(thinking));
  if (thinkingValue !== undefined) hashes.thinking = thinkingValue;
  const toolChoiceValue = toolChoiceHash ?? (toolChoice === undefined ? undefined : hashValue(toolChoice));
  if (toolChoiceValue !== undefined) hashes.toolChoice = toolChoiceValue;
  // Sorted, so that equal parameters are equal objects whichever way they arrived.
  return Object.fromEntries(Object.entries(hashes).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** Markers on messages move with every turn; the others (tools, system) repeat. */
export function isMessageMarker(name: string): boolean {
  return name.startsWith('messages');
}

/** Prefix order, message markers last: one order, however a client listed them. */
function sortMarkers(names: string[]): string[] {
  const key = (name: string) => [isMessageMarker(name) ? 1 : 0, readMarker(name).position ?? -1] as const;
  return names.sort((a, b) => {
    const [x, y] = [key(a), key(b)];
    return x[0] - y[0] || x[1] - y[1] || (a < b ? -1 : a > b ? 1 : 0);
  });
}

/** Marker lists repeat turn after turn: normalised once per list, TTL and counts (bounded). */
const normalized = new Map<string, string[]>();

function normalizedMarkers(markers: readonly string[], ttl: string, snapshot: SnapshotContent): string[] {
  const counts = { system: snapshot.systemBlockHashes?.length, messages: snapshot.messageHashes?.length };
  const key = JSON.stringify([markers, ttl, counts.system, counts.messages]);
  let names = normalized.get(key);
  if (names === undefined) {
    names = sortMarkers(markers.map((name) => normalizeMarker(name, ttl, counts)));
    if (normalized.size >= 4096) normalized.clear();
    normalized.set(key, names);
  }
  return names;
}

/**
 * Block counts that tell more than "one block per message": one per message
 * hash, not all 1. Otherwise undefined, so that equal lookbacks are equal
 * prefixes however they arrived.
 */
function blockCounts(hashes: readonly string[], counts: number[] | undefined): number[] | undefined {
  if (counts === undefined || counts.length !== hashes.length) return undefined;
  return counts.some((n) => n !== 1) ? counts : undefined;
}

export function toPrefix(snapshot: SnapshotContent): Prefix {
  const prefix: Prefix = { model: snapshot.model };
  const systemHash =
    snapshot.systemHash ??
    (snapshot.systemBlockHashes ? hashString(snapshot.systemBlockHashes.join('\u0000')) : undefined);
  if (systemHash !== undefined) prefix.systemHash = systemHash;
  if (snapshot.systemBlockHashes) prefix.systemBlockHashes = snapshot.systemBlockHashes;
  if (snapshot.tools) {
    prefix.tools = snapshot.tools;
    prefix.toolsHash = hashToolList(snapshot.tools);
  }
  const control = snapshot.cacheControl;
  // After a stored conversation, a message's place in the prompt is not known.
  const continues = snapshot.continuesResponse === true;
  const markers = (control?.markers ?? []).filter((name) => !continues || !isMessageMarker(name));
  if (markers.length > 0) prefix.markers = normalizedMarkers(markers, control?.ttl ?? DEFAULT_MARKER_TTL, snapshot);
  const cacheControlHash = snapshot.cacheControlHash ?? (control ? hashSettings(settingsOf(control)) : undefined);
  if (cacheControlHash !== undefined) prefix.cacheControlHash = cacheControlHash;
  const ttlMs = parseDuration(control?.ttl);
  if (ttlMs !== undefined) prefix.ttlMs = ttlMs;
  const params = paramsOf(snapshot);
  if (params !== undefined) prefix.params = params;
  if (snapshot.messageHashes && !continues) {
    prefix.messageHashes = snapshot.messageHashes;
    const blocks = blockCounts(snapshot.messageHashes, snapshot.messageBlockCounts);
    if (blocks !== undefined) prefix.messageBlockCounts = blocks;
    if (snapshot.prefixChars?.length === snapshot.messageHashes.length + 1) prefix.prefixChars = snapshot.prefixChars;
  }
  if (snapshot.partial !== undefined) prefix.partial = snapshot.partial;
  return prefix;
}
