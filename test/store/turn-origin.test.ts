// Where a turn came from (agent version, trace and span ids) is stored with
// the turn on both stores: its break record names it whatever order the
// snapshot and usage arrive in, a usage fills only what the snapshot left
// unnamed, and the fingerprint of a cause names the version of its earliest
// break (the release that introduced it).
import { describe, expect, it } from 'vitest';
import type { CacheEvent } from '../../src/core/types.js';
import { fingerprintsOf } from '../../src/store/fingerprints.js';
import { MINUTE, SEED_TOOLS, tools, turn, usage } from '../core/scenario.js';
import { storeUnderTest } from '../store-under-test.js';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN = '00f067aa0ba902b7';
const OTHER_SPAN = '53995c3f42cd8ad8';
const REORDERED = tools(['shell', ...SEED_TOOLS.filter((n) => n !== 'shell')]);

/** A warm turn, then one whose tools were re-ordered: a break, sent as a snapshot and a usage. */
function breakingSession(sessionId: string, at: number, snapshot: Partial<CacheEvent>, usagePart: Partial<CacheEvent>): CacheEvent[] {
  const second = turn(`${sessionId}_2`, { sessionId, at: at + MINUTE, tools: REORDERED, usage: usage(0, 49_300) });
  const snapshotEvent: Record<string, unknown> = { ...second, type: 'snapshot', ...snapshot };
  delete snapshotEvent.usage;
  delete snapshotEvent.endTs;
  return [
    turn(`${sessionId}_1`, { sessionId, at, usage: usage(48_900, 400) }),
    snapshotEvent as unknown as CacheEvent,
    { type: 'usage', requestId: second.requestId, sessionId, ts: second.endTs, provider: 'anthropic', usage: second.usage, ...usagePart } as CacheEvent,
  ];
}

async function breakOf(events: CacheEvent[]) {
  const store = await storeUnderTest();
  for (const event of events) await store.write([{ project: 'p', events: [event] }]);
  const { items } = await store.breaks('p', {}, {}, { limit: 10 });
  expect(items).toHaveLength(1);
  const prefixes = await store.breakPrefixes('p', items[0]!.requestId);
  expect(prefixes!.break).toEqual(items[0]);
  return { store, record: items[0]! };
}

describe('a turn\'s origin, stored', () => {
  it('names the snapshot\'s version, trace and span in the break record, in either order of arrival', async () => {
    const events = breakingSession('s', 0, { agentVersion: '2.1.332', traceId: TRACE, spanId: SPAN }, { spanId: OTHER_SPAN });
    const inOrder = (await breakOf(events)).record;
    const reversed = (await breakOf([events[0]!, events[2]!, events[1]!])).record;
    expect(inOrder).toMatchObject({ reason: 'tools_order_changed', agentVersion: '2.1.332', traceId: TRACE, spanId: SPAN });
    expect(reversed).toEqual(inOrder);
  });

  it('takes from the usage what the snapshot left unnamed, and stays null when nothing named it', async () => {
    const filled = (await breakOf(breakingSession('s', 0, {}, { agentVersion: '0.61.0', traceId: TRACE, spanId: OTHER_SPAN }))).record;
    expect(filled).toMatchObject({ agentVersion: '0.61.0', traceId: TRACE, spanId: OTHER_SPAN });
    const bare = (await breakOf(breakingSession('s', 0, {}, {}))).record;
    expect(bare).toMatchObject({ agentVersion: null, traceId: null, spanId: null });
  });

  it('keeps the origin a repeat of a known call brings, and still counts the repeat a duplicate', async () => {
    const store = await storeUnderTest();
    const [first, snapshot, usageEvent] = breakingSession('s', 0, {}, {});
    await store.write([{ project: 'p', events: [first!, snapshot!, usageEvent!] }]);
    // As a harness's span repeats the call its log record told, with the trace it ran in.
    const { counts } = await store.write([{ project: 'p', events: [{ ...usageEvent!, traceId: TRACE, spanId: SPAN } as CacheEvent] }]);
    expect(counts).toEqual([{ accepted: 0, duplicates: 1 }]);
    const { items } = await store.breaks('p', {}, {}, { limit: 10 });
    expect(items.map((b) => [b.traceId, b.spanId])).toEqual([[TRACE, SPAN]]);
  });

  it('gives a fingerprint the version of its earliest break', async () => {
    const store = await storeUnderTest();
    const events = [
      ...breakingSession('later', 30 * MINUTE, { agentVersion: '2.2.0' }, {}),
      ...breakingSession('first', 0, { agentVersion: '2.1.0' }, {}),
      ...breakingSession('middle', 10 * MINUTE, { agentVersion: '2.1.5' }, {}),
    ];
    await store.write([{ project: 'p', events }]);
    const { rows } = await fingerprintsOf(store, 'p', {}, {});
    expect(rows.map((r) => [r.reason, r.breaks, r.agentVersion])).toEqual([['tools_order_changed', 3, '2.1.0']]);
  });
});
