// How a prefix is stored, whatever the store: the key it is found by, its
// row's columns, the prefix read back from a row, and a turn's own view of a
// stored one.
import { hashString } from '../../core/hash.js';
import { isMessageMarker } from '../../core/prefix.js';
import type { CutPlace, Prefix, ToolRef } from '../../core/types.js';

/** The key a prefix is stored under: its content, message hashes and message markers aside. */
export function prefixKey(prefix: Prefix): string {
  return hashString(
    [
      prefix.model,
      prefix.systemHash ?? '',
      prefix.systemBlockHashes?.join('\u0001') ?? '\u0002',
      prefix.toolsHash ?? '',
      prefix.cacheControlHash ?? '',
      prefix.ttlMs ?? '',
      prefixMarkers(prefix) ?? '\u0002',
      (prefix.params ? JSON.stringify(prefix.params) : null) ?? '\u0002',
      // Only a cut prefix has this part: the keys of whole ones stay what they were.
      ...(prefix.partial === undefined ? [] : [prefix.partial]),
    ].join('\u0000'),
  );
}

/** The markers a prefix row keeps (not those on messages), as JSON; null when none. */
export function prefixMarkers(prefix: Prefix): string | null {
  const kept = prefix.markers?.filter((name) => !isMessageMarker(name)) ?? [];
  return kept.length > 0 ? JSON.stringify(kept) : null;
}

/** A prefix row's columns after hash and toolset_id: model, system_hash, system_block_hashes, (toolset_id), cache_control_hash, ttl_ms, markers, params, partial. */
export function prefixColumns(prefix: Prefix) {
  return {
    model: prefix.model,
    systemHash: prefix.systemHash ?? null,
    systemBlockHashes: prefix.systemBlockHashes ? JSON.stringify(prefix.systemBlockHashes) : null,
    cacheControlHash: prefix.cacheControlHash ?? null,
    ttlMs: prefix.ttlMs ?? null,
    markers: prefixMarkers(prefix),
    params: prefix.params ? JSON.stringify(prefix.params) : null,
    partial: prefix.partial ?? null,
  };
}

/** A tool list as a toolset row keeps it. */
export function toolsetJson(tools: readonly ToolRef[]): string {
  return JSON.stringify(tools.map((t) => [t.name, t.schemaHash]));
}

export interface PrefixRow {
  model: string;
  system_hash: string | null;
  system_block_hashes: string | null;
  tools_hash: string | null;
  tools: string | null;
  cache_control_hash: string | null;
  ttl_ms: number | null;
  markers: string | null;
  params: string | null;
  partial: CutPlace | null;
}

/** The stored prefix of a row (joined with its toolset), without message hashes. */
export function prefixOfRow(row: PrefixRow): Prefix {
  const prefix: Prefix = { model: row.model };
  if (row.system_hash !== null) prefix.systemHash = row.system_hash;
  if (row.system_block_hashes !== null) prefix.systemBlockHashes = JSON.parse(row.system_block_hashes) as string[];
  if (row.tools !== null && row.tools_hash !== null) {
    const pairs = JSON.parse(row.tools) as [string, string][];
    prefix.tools = pairs.map(([name, schemaHash]) => ({ name, schemaHash }));
    prefix.toolsHash = row.tools_hash;
  }
  if (row.cache_control_hash !== null) prefix.cacheControlHash = row.cache_control_hash;
  if (row.ttl_ms !== null) prefix.ttlMs = row.ttl_ms;
  if (row.markers !== null) prefix.markers = JSON.parse(row.markers) as string[];
  if (row.params !== null) prefix.params = JSON.parse(row.params) as Record<string, string>;
  if (row.partial !== null) prefix.partial = row.partial;
  return prefix;
}

/**
 * A turn's view of the stored prefix equal to `prefix`: the stored object
 * itself when the turn adds nothing, else a copy with the turn's message
 * hashes and message markers. Turns of a stream share one object instead of
 * each holding the tool list its event carried.
 */
export function internedPrefix(stored: Prefix, prefix: Prefix): Prefix {
  const messageMarkers = prefix.markers?.filter(isMessageMarker) ?? [];
  if (!prefix.messageHashes && messageMarkers.length === 0) return stored;
  const interned = { ...stored };
  if (prefix.messageHashes) interned.messageHashes = prefix.messageHashes;
  if (prefix.messageBlockCounts) interned.messageBlockCounts = prefix.messageBlockCounts;
  if (prefix.prefixChars) interned.prefixChars = prefix.prefixChars;
  if (messageMarkers.length > 0) interned.markers = [...(stored.markers ?? []), ...messageMarkers];
  return interned;
}
