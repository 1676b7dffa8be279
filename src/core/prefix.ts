// Reduces a snapshot to what detection compares, computing the aggregates once
// so that unchanged prefixes compare in O(1).
import { parseDuration } from './duration.js';
import { hashString, hashValue } from './hash.js';
import type { CacheControl, Prefix, SnapshotContent, ToolRef } from './types.js';

/** One hash over the names, schema hashes and order of a tool list. */
export function hashToolList(tools: readonly ToolRef[]): string {
  let joined = '';
  for (const tool of tools) joined += tool.name + '\u0000' + tool.schemaHash + '\u0001';
  return hashString(joined);
}

/**
 * cache_control settings repeat on every turn of a stream: their canonical
 * hash is remembered by their plain JSON (bounded, so it cannot grow).
 */
const cacheControlHashes = new Map<string, string>();

function hashCacheControl(cacheControl: CacheControl): string {
  const plain = JSON.stringify(cacheControl);
  let hash = cacheControlHashes.get(plain);
  if (hash === undefined) {
    if (cacheControlHashes.size >= 4096) cacheControlHashes.clear();
    hash = hashValue(cacheControl);
    cacheControlHashes.set(plain, hash);
  }
  return hash;
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
  const cacheControlHash =
    snapshot.cacheControlHash ?? (snapshot.cacheControl ? hashCacheControl(snapshot.cacheControl) : undefined);
  if (cacheControlHash !== undefined) prefix.cacheControlHash = cacheControlHash;
  const ttlMs = parseDuration(snapshot.cacheControl?.ttl);
  if (ttlMs !== undefined) prefix.ttlMs = ttlMs;
  if (snapshot.messageHashes) prefix.messageHashes = snapshot.messageHashes;
  return prefix;
}
