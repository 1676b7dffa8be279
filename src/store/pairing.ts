// How each store picks a waiting half's other half (Store.pairHalf): among
// the halves of another kind waiting under its partner keys, oldest first.
import type { WaitingHalf } from './store.js';

/** The keys the other half may wait under (its own key unless it says otherwise), as three: the last repeated. */
export function partnerKeys(half: WaitingHalf): [string, string, string] {
  const keys = half.partnerKeys ?? [half.key];
  if (keys.length === 0 || keys.length > 3) throw new Error(`a half names ${keys.length} partner keys; 1 to 3 are looked under`);
  const [a, b = a, c = b] = keys as [string, string?, string?];
  return [a, b, c];
}

/** The index of the other half among `waiting` (oldest first); -1 for none. */
export function chosen(half: WaitingHalf, waiting: readonly WaitingHalf[]): number {
  if (waiting.length === 0) return -1;
  return half.choose ? half.choose(waiting) : 0;
}
