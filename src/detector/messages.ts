// A conversation's turns repeat each other's messages: turn n sends the n-1
// messages of the turn before it, and one or two more. Kept as a list per
// turn, a stream's message hashes grow with the square of its length. Here
// each kept turn's list is the first `shared` entries of an earlier turn's
// list, then its own tail: what a stream holds grows with its messages, not
// with its turns times its messages. The turn's prefix reads the same as
// before (messageHashes, messageBlockCounts), rebuilt when read.
import type { Prefix } from '../core/types.js';

interface MessageList {
  /** The earlier list this one starts with, for `shared` entries; undefined for a list held whole. */
  parent: MessageList | undefined;
  shared: number;
  /** This list's own entries, after the shared ones. */
  hashes: string[];
  /** Content blocks of the own entries; undefined: one each. */
  counts: number[] | undefined;
  /** The prefix had messageBlockCounts. */
  counted: boolean;
  length: number;
}

const LISTS = new WeakMap<Prefix, MessageList>();

/** Estimated bytes of one entry of a list: the array slot and the hash string, the count's slot. */
const entryBytes = (hash: string) => 8 + 16 + hash.length + 8;

function entries(list: MessageList, limit = list.length): { hashes: string[]; counts: number[] } {
  // Walk back to the root collecting segments, then join them in order: linear in `limit`.
  const pieces: { hashes: string[]; counts: number[] | undefined; end: number }[] = [];
  for (let at: MessageList | undefined = list, end = limit; at !== undefined && end > 0; end = Math.min(end, at.shared), at = at.parent) {
    if (end > at.shared) pieces.push({ hashes: at.hashes, counts: at.counts, end: end - at.shared });
  }
  const hashes: string[] = [];
  const counts: number[] = [];
  for (let i = pieces.length - 1; i >= 0; i--) {
    const piece = pieces[i]!;
    for (let j = 0; j < piece.end; j++) {
      hashes.push(piece.hashes[j]!);
      counts.push(piece.counts?.[j] ?? 1);
    }
  }
  return { hashes, counts };
}

function attach(prefix: Prefix, list: MessageList): void {
  LISTS.set(prefix, list);
  Object.defineProperty(prefix, 'messageHashes', { get: () => entries(list).hashes, enumerable: true, configurable: true });
  if (list.counted) Object.defineProperty(prefix, 'messageBlockCounts', { get: () => entries(list).counts, enumerable: true, configurable: true });
}

/**
 * Stores `prefix`'s messages as what they share with `earlier`'s, then the
 * rest; returns the estimated bytes the prefix's messages now hold.
 */
export function shareMessages(prefix: Prefix, earlier: Prefix | undefined): number {
  const own = LISTS.get(prefix);
  if (own !== undefined) return bytesOf(own);
  const hashes = prefix.messageHashes;
  if (hashes === undefined) return 0;
  const counts = prefix.messageBlockCounts;
  const parent = earlier === undefined ? undefined : LISTS.get(earlier);
  let shared = 0;
  if (parent !== undefined) {
    const before = entries(parent);
    const limit = Math.min(before.hashes.length, hashes.length);
    while (shared < limit && before.hashes[shared] === hashes[shared] && before.counts[shared] === (counts?.[shared] ?? 1)) shared++;
  }
  const list: MessageList = {
    parent: shared > 0 ? parent : undefined,
    shared,
    hashes: hashes.slice(shared),
    counts: counts?.slice(shared),
    counted: counts !== undefined,
    length: hashes.length,
  };
  attach(prefix, list);
  // A size per message would grow with turns times messages again; only the stored fan-out insight reads it.
  delete prefix.prefixChars;
  return bytesOf(list);
}

/**
 * Holds `prefix`'s messages whole again when they lean on `earlier`'s, which
 * is going; returns the estimated bytes they hold then, undefined when they
 * did not lean on it. In place: lists leaning on this one lean on it still.
 */
export function detachMessages(prefix: Prefix, earlier: Prefix): number | undefined {
  const list = LISTS.get(prefix);
  if (list?.parent === undefined || list.parent !== LISTS.get(earlier)) return undefined;
  const { hashes, counts } = entries(list);
  Object.assign(list, { parent: undefined, shared: 0, hashes, counts: list.counted ? counts : undefined });
  return bytesOf(list);
}

function bytesOf(list: MessageList): number {
  let bytes = 64;
  for (const hash of list.hashes) bytes += entryBytes(hash);
  return bytes;
}
