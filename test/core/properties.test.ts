import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { attribute } from '../../src/core/attribution.js';
import { byCodePoint } from '../../src/core/hash.js';
import { DEFAULT_DETECTION } from '../../src/core/options.js';
import { toPrefix } from '../../src/core/prefix.js';
import { addUsage, cacheRate, emptySums } from '../../src/core/rate.js';
import { cloneHistory, compareTurns, emptyHistory } from '../../src/core/history.js';
import { evaluateEvents, evaluateOrdered, foldEvents, groupStreams } from '../../src/core/stream.js';
import type { CacheEvent, ToolRef, Usage } from '../../src/core/types.js';
import { eventsOf, requestArb } from '../store/random-workload.js';

const usageArb: fc.Arbitrary<Usage> = fc.record({
  uncached: fc.integer({ min: 0, max: 5_000 }),
  read: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 60_000 })),
  write: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 60_000 })),
  write1h: fc.constant(0),
  output: fc.integer({ min: 0, max: 2_000 }),
  cacheReported: fc.integer({ min: 0, max: 9 }).map((n) => n > 0),
  writeReported: fc.boolean(),
});

describe('stream evaluation properties', () => {
  it('any permutation with any duplicates, even conflicting ones, gives the states and breaks of in-order delivery', () => {
    fc.assert(
      fc.property(
        fc.array(requestArb, { minLength: 1, maxLength: 25 }),
        fc.infiniteStream(fc.nat()),
        fc.array(fc.nat(), { maxLength: 10 }),
        fc.array(fc.tuple(fc.nat(), usageArb), { maxLength: 4 }),
        (requests, randomness, duplicateIndices, conflicts) => {
          const inOrder = eventsOf(requests);
          // Other sources' versions of some usages: the same request, different figures.
          const conflicting = conflicts.flatMap(([i, other]): CacheEvent[] => {
            const event = inOrder[i % inOrder.length]!;
            return event.type === 'snapshot' ? [] : [{ ...event, usage: other }];
          });
          const withDuplicates = [...inOrder, ...duplicateIndices.map((i) => inOrder[i % inOrder.length]!), ...conflicting];
          const shuffled = withDuplicates
            .map((event) => ({ event, key: randomness.next().value }))
            .sort((a, b) => a.key - b.key)
            .map((x) => x.event);
          expect(evaluateEvents(shuffled, DEFAULT_DETECTION)).toEqual(evaluateEvents([...inOrder, ...conflicting], DEFAULT_DETECTION));
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('incremental evaluation', () => {
  it('folding a stream\'s first turns into a history, then evaluating the rest, equals evaluating it whole', () => {
    fc.assert(
      fc.property(fc.array(requestArb, { minLength: 1, maxLength: 25 }), fc.nat(), (requests, cut) => {
        const { streams, compactionsOf } = groupStreams(foldEvents(eventsOf(requests)));
        for (const stream of streams.values()) {
          const ordered = [...stream].sort(compareTurns);
          const compactions = [...compactionsOf(stream)].sort(compareTurns);
          const whole = evaluateOrdered(emptyHistory(), ordered, DEFAULT_DETECTION, compactions);
          const at = cut % (ordered.length + 1);
          const history = emptyHistory();
          const head = evaluateOrdered(history, ordered.slice(0, at), DEFAULT_DETECTION, compactions);
          // A copy resumes like the original.
          const tail = evaluateOrdered(cloneHistory(history), ordered.slice(at), DEFAULT_DETECTION, compactions);
          expect([...head, ...tail]).toEqual(whole);
        }
      }),
      { numRuns: 300 },
    );
  });
});

/** A tool list edit described by what was done, so the expectation does not reuse the diff. */
const editArb = fc
  .record({
    base: fc.uniqueArray(fc.stringMatching(/^[a-z_]{1,8}$/), { minLength: 1, maxLength: 12 }),
    removeMask: fc.array(fc.integer({ min: 0, max: 4 }).map((n) => n === 0), { minLength: 12, maxLength: 12 }),
    rehashMask: fc.array(fc.integer({ min: 0, max: 4 }).map((n) => n === 0), { minLength: 12, maxLength: 12 }),
    added: fc.uniqueArray(fc.stringMatching(/^NEW[A-Z]{1,4}$/), { maxLength: 3 }),
    swaps: fc.array(fc.tuple(fc.nat(), fc.nat()), { maxLength: 3 }),
    insertAt: fc.array(fc.nat(), { minLength: 3, maxLength: 3 }),
  })
  .map((e) => {
    const removed = e.base.filter((_, i) => e.removeMask[i]);
    const kept = e.base.filter((_, i) => !e.removeMask[i]);
    const rehashed = kept.filter((_, i) => e.rehashMask[i]);
    const order = [...kept];
    for (const [a, b] of e.swaps) {
      if (order.length < 2) break;
      const i = a % order.length;
      const j = b % order.length;
      [order[i], order[j]] = [order[j]!, order[i]!];
    }
    const next = [...order];
    e.added.forEach((name, k) => next.splice(e.insertAt[k]! % (next.length + 1), 0, name));
    const moved = kept.filter((name) => kept.indexOf(name) !== order.indexOf(name));
    return { base: e.base, next, removed, rehashed, added: e.added, moved };
  });

const ref = (name: string, version = 1): ToolRef => ({ name, schemaHash: `${name}#${version}` });

describe('tool list edits', () => {
  it('give the right reason precedence and exactly the right changedToolNames', () => {
    fc.assert(
      fc.property(editArb, (edit) => {
        const before = toPrefix({ model: 'm', tools: edit.base.map((n) => ref(n)) });
        const after = toPrefix({
          model: 'm',
          tools: edit.next.map((n) => ref(n, edit.rehashed.includes(n) ? 2 : 1)),
        });
        const found = attribute({ prefix: before, model: 'm' }, { prefix: after, model: 'm' }, true);
        const sorted = (names: string[]) => [...new Set(names)].sort(byCodePoint);
        expect(found.toolChanges).toEqual({
          added: sorted(edit.added),
          removed: sorted(edit.removed),
          schemaChanged: sorted(edit.rehashed),
          moved: sorted(edit.moved),
        });
        const schema = edit.added.length + edit.removed.length + edit.rehashed.length > 0;
        const expectedReasons = [
          ...(schema ? ['tools_schema_changed'] : []),
          ...(edit.moved.length > 0 ? ['tools_order_changed'] : []),
        ];
        expect(found.reasons).toEqual(expectedReasons);
      }),
      { numRuns: 500 },
    );
  });
});

describe('cache rate', () => {
  it('is in [0, 1], is sum over sum of its parts, and is null only without data', () => {
    fc.assert(
      fc.property(fc.array(fc.array(usageArb, { maxLength: 8 }), { maxLength: 5 }), (groups) => {
        const all = emptySums();
        let read = 0;
        let denominator = 0;
        for (const group of groups) {
          const sums = emptySums();
          for (const usage of group) {
            addUsage(sums, usage);
            addUsage(all, usage);
            if (usage.cacheReported) {
              read += usage.read;
              denominator += usage.uncached + usage.read + usage.write;
            }
          }
          const rate = cacheRate(sums);
          if (rate !== null) expect(rate).toBeGreaterThanOrEqual(0);
          if (rate !== null) expect(rate).toBeLessThanOrEqual(1);
        }
        const rate = cacheRate(all);
        if (denominator === 0) expect(rate).toBeNull();
        else expect(rate).toBeCloseTo(read / denominator, 12);
      }),
    );
  });
});
