// A turn's size estimate (prefixChars) is stored with it on both stores,
// whichever of its snapshot and usage comes first, and read back with the
// cold turns the fan-out insight counts: sizes only, beside the message hashes.
import { describe, expect, it } from 'vitest';
import type { CacheEvent } from '../../src/core/types.js';
import { hashString } from '../../src/core/hash.js';
import { turn } from '../core/scenario.js';
import { storeUnderTest } from '../store-under-test.js';

const MESSAGES = ['task a', 'reply'].map(hashString);
const CHARS = [10_000, 15_000, 15_200];

/** A subagent's first request, as a snapshot and a usage. */
function halves(requestId: string, sessionId: string): [CacheEvent, CacheEvent] {
  const { usage, endTs, type: _, ...snapshot } = turn(requestId, { sessionId, messageHashes: MESSAGES, prefixChars: CHARS });
  return [{ ...snapshot, type: 'snapshot' }, { type: 'usage', requestId, sessionId, ts: endTs, provider: 'anthropic', usage }];
}

describe('prefix_chars, stored', () => {
  it('keeps the estimate whichever half arrives first, and reads it back with the cold turns', async () => {
    const store = await storeUnderTest();
    const [snapshotFirst, usageSecond] = halves('a', 'sess_a');
    const [snapshotSecond, usageFirst] = halves('b', 'sess_b');
    for (const event of [snapshotFirst, usageFirst, usageSecond, snapshotSecond]) await store.write([{ project: 'p', events: [event] }]);
    const cold = await store.coldTurns('p', {}, {}, 10);
    expect(cold.map((t) => [t.requestId, t.prefixChars, t.messageHashes?.length])).toEqual([
      ['a', CHARS, 2],
      ['b', CHARS, 2],
    ]);
  });

  it('has none for a turn whose snapshot sent hashes only', async () => {
    const store = await storeUnderTest();
    await store.write([{ project: 'p', events: [turn('h', { sessionId: 'sess_h', messageHashes: MESSAGES })] }]);
    const [cold] = await store.coldTurns('p', {}, {}, 10);
    expect(cold).toMatchObject({ requestId: 'h', prefixChars: null });
    expect(cold!.messageHashes).toHaveLength(2);
  });
});
