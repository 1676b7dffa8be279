// The halves of OTLP joins waiting in the store (Store.pairHalf), on the
// store under test: a half takes its other half (under its key, or the one
// it chooses among those waiting under its partner keys) or waits; each half is taken
// once, even by two stores on one database pairing at once; what waits is
// bounded in bytes per project, oldest first, and by age.
import { describe, expect, it } from 'vitest';
import type { Store, WaitBounds, WaitingHalf } from '../../src/store/store.js';
import { freshDb, openStore, storeUnderTest } from '../store-under-test.js';

const BOUNDS: WaitBounds = { now: 1_000_000, maxAgeMs: 60_000, maxBytes: 1_000 };

function half(key: string, kind: 'body' | 'id', value = `${kind} of ${key}`, bytes = 100): WaitingHalf {
  return { key, kind, value, bytes };
}

/** Pairs and says only what was taken (its value) or that the half waits. */
async function pair(store: Store, h: WaitingHalf, bounds = BOUNDS, project = 'default'): Promise<string | 'waits'> {
  const { other } = await store.pairHalf(project, h, bounds);
  return other === undefined ? 'waits' : other.value;
}

describe('waiting halves', () => {
  it('the second half of a join takes the first, once; a half sent again replaces itself; projects never pair', async () => {
    const store = await storeUnderTest();
    expect(await pair(store, half('k1', 'body'))).toBe('waits');
    expect(await store.pairHalf('default', half('k1', 'id'), BOUNDS)).toEqual({ other: half('k1', 'body'), evicted: [] });
    // Taken: the next half of that key waits.
    expect(await pair(store, half('k1', 'id'))).toBe('waits');
    expect(await pair(store, half('k1', 'body', 'again'))).toBe('id of k1');

    expect(await pair(store, half('k2', 'body', 'first'))).toBe('waits');
    expect(await pair(store, half('k2', 'body', 'resent'))).toBe('waits');
    expect(await pair(store, half('k2', 'id'))).toBe('resent');
    expect(await pair(store, half('k2', 'id'))).toBe('waits');

    expect(await pair(store, half('k3', 'body'), BOUNDS, 'a')).toBe('waits');
    expect(await pair(store, half('k3', 'id'), BOUNDS, 'b')).toBe('waits');
    expect(await pair(store, half('k3', 'id'), BOUNDS, 'a')).toBe('body of k3');
  });

  it('a half may look under several keys and choose among the halves waiting there, oldest first; the others keep waiting', async () => {
    const store = await storeUnderTest();
    for (const [key, value] of [['s@1', 'at 1'], ['s@2', 'at 2'], ['s@3', 'at 3'], ['t@2', 'other stream']] as const) {
      expect(await pair(store, half(key, 'body', value))).toBe('waits');
    }
    const seen: string[][] = [];
    const looking = (choose: (values: string[]) => number): WaitingHalf => ({
      ...half('s@2', 'id'),
      partnerKeys: ['s@1', 's@2', 's@3'],
      choose: (waiting) => {
        seen.push(waiting.map((w) => w.value));
        return choose(waiting.map((w) => w.value));
      },
    });
    expect(await pair(store, looking((values) => values.indexOf('at 2')))).toBe('at 2');
    expect(seen).toEqual([['at 1', 'at 2', 'at 3']]);
    // None chosen: it waits under its own key, and the halves it saw still wait.
    expect(await pair(store, looking(() => -1))).toBe('waits');
    expect(await pair(store, half('s@1', 'id'))).toBe('at 1');
    expect(await pair(store, half('s@3', 'id'))).toBe('at 3');
    // Without a choice, the oldest.
    expect(await pair(store, { ...half('t@2', 'id'), partnerKeys: ['t@1', 't@2', 't@3'] })).toBe('other stream');
    await expect(store.pairHalf('default', { ...half('u', 'id'), partnerKeys: ['a', 'b', 'c', 'd'] }, BOUNDS)).rejects.toThrow('4 partner keys');
  });

  it('a half put back waits again without taking the half that waits for it', async () => {
    const store = await storeUnderTest();
    expect(await pair(store, half('k', 'body'))).toBe('waits');
    expect(await store.putBackHalf('default', half('k', 'id'), BOUNDS)).toEqual({ other: undefined, evicted: [] });
    // Both wait: either is taken by the next of its other kind.
    expect(await pair(store, half('k', 'body', 'retried'))).toBe('id of k');
  });

  it("bounds the bytes of a project's halves: the oldest go and are named; one half larger than the bound is not kept", async () => {
    const store = await storeUnderTest();
    const big = (key: string, kind: 'body' | 'id') => half(key, kind, `${kind} ${key}`, 400);
    expect((await store.pairHalf('default', big('a', 'body'), BOUNDS)).evicted).toEqual([]);
    expect((await store.pairHalf('default', big('b', 'id'), BOUNDS)).evicted).toEqual([]);
    // 1,200 bytes past 1,000: the oldest, a's body, goes.
    expect((await store.pairHalf('default', big('c', 'body'), BOUNDS)).evicted).toEqual(['body']);
    // Another project's halves count apart.
    expect((await store.pairHalf('other', big('d', 'body'), BOUNDS)).evicted).toEqual([]);
    expect(await pair(store, half('a', 'id'))).toBe('waits');
    expect(await pair(store, half('b', 'body'))).toBe('id b');
    expect(await pair(store, half('c', 'id'))).toBe('body c');
    // 1,001 bytes alone: not kept, and nothing else goes for it.
    expect(await pair(store, half('e', 'body'))).toBe('waits');
    expect(await store.pairHalf('default', half('f', 'body', 'huge', 1_001), BOUNDS)).toEqual({ other: undefined, evicted: ['body'] });
    expect(await pair(store, half('f', 'id'))).toBe('waits');
    expect(await pair(store, half('e', 'id'))).toBe('body of e');
  });

  it('a half past its age is never paired, and trimHalves deletes it without a new half coming', async () => {
    const store = await storeUnderTest();
    expect(await pair(store, half('old', 'body'))).toBe('waits');
    expect(await pair(store, half('young', 'body'), { ...BOUNDS, now: BOUNDS.now + 30_000 })).toBe('waits');
    const later = { ...BOUNDS, now: BOUNDS.now + 60_000 };
    expect(await pair(store, half('old', 'id'), later)).toBe('waits');
    expect(await pair(store, half('young', 'id'), later)).toBe('body of young');
    // Left: old's id (expires at +120 s). Nothing is past its age before that.
    expect(await store.trimHalves(BOUNDS.now + 119_999)).toBe(0);
    expect(await store.trimHalves(BOUNDS.now + 120_000)).toBe(1);
    expect(await pair(store, half('old', 'body'), BOUNDS)).toBe('waits');
  });

  it('two stores on one database pairing the two halves of 40 joins at once: every join pairs exactly once', async () => {
    const db = await freshDb('halves');
    const [one, two] = [await openStore(db), await openStore(db)];
    const keys = Array.from({ length: 40 }, (_, i) => `join-${i}`);
    const results = await Promise.all(
      keys.flatMap((key, i) => [pair(i % 2 === 0 ? one! : two!, half(key, 'body'), { ...BOUNDS, maxBytes: 1e9 }), pair(i % 2 === 0 ? two! : one!, half(key, 'id'), { ...BOUNDS, maxBytes: 1e9 })]),
    );
    const paired = results.filter((r) => r !== 'waits');
    expect(paired).toHaveLength(40);
    expect(results.filter((r) => r === 'waits')).toHaveLength(40);
    // Nothing was left waiting: a third half of any key waits.
    for (const key of keys.slice(0, 5)) expect(await pair(one!, half(key, 'id'))).toBe('waits');
  });
});
