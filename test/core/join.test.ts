import { describe, expect, it } from 'vitest';
import { mergeEvent, toTurn, type TurnParts } from '../../src/core/join.js';
import type { CacheEvent } from '../../src/core/types.js';
import { foldEvents } from '../../src/core/stream.js';
import { T0, turn, usage } from './scenario.js';

describe('joining events into turns', () => {
  it('treats an identical repeat as a duplicate', () => {
    const first = mergeEvent(undefined, turn('r1'));
    expect(first.duplicate).toBe(false);
    expect(mergeEvent(first.parts, turn('r1')).duplicate).toBe(true);
  });

  it('keeps the more informative of two conflicting parts, whatever came first', () => {
    // A harness's log record (no cache write) and its span (with one) for the same request.
    const poor = turn('r1', { usage: { ...usage(40_000, 0), cacheReported: true } });
    const rich = turn('r1', { usage: usage(40_000, 900) });
    for (const [a, b] of [[poor, rich], [rich, poor]] as const) {
      const merged = mergeEvent(mergeEvent(undefined, a).parts, b);
      expect(toTurn(merged.parts)!.usage!.write).toBe(900);
    }
    expect(mergeEvent(mergeEvent(undefined, rich).parts, poor).duplicate).toBe(true);
    const unreported = turn('r1', { usage: { ...usage(0, 0), cacheReported: false } });
    expect(toTurn(mergeEvent(mergeEvent(undefined, unreported).parts, poor).parts)!.usage!.cacheReported).toBe(true);
  });

  it('a usage with no session waits for its snapshot, then takes the snapshot stream and time', () => {
    const pending = mergeEvent(undefined, {
      type: 'usage', requestId: 'r1', ts: T0 + 9_000, provider: 'anthropic', model: 'claude-sonnet-4-5', usage: usage(0, 5_000),
    });
    expect(toTurn(pending.parts)).toBeUndefined();
    const { usage: _u, endTs: _e, type: _t, ...snapshot } = turn('r1', { agentId: 'sub', at: 1_000 });
    const joined = toTurn(mergeEvent(pending.parts, { ...snapshot, type: 'snapshot' }).parts)!;
    expect(joined).toMatchObject({ sessionId: 'sess_A', agentId: 'sub', ts: T0 + 1_000, endTs: T0 + 9_000 });
    expect(joined.usage!.write).toBe(5_000);
  });

  it('a usage-only turn is placed by its own session, agent and time', () => {
    const [only] = foldEvents([
      { type: 'usage', requestId: 'u', sessionId: 's', agentId: 'a', ts: T0, provider: 'openai', model: 'gpt-5', usage: usage(1, 0), diagnostics: { x: 1 } },
    ]);
    expect(only).toMatchObject({ sessionId: 's', agentId: 'a', ts: T0, provider: 'openai', model: 'gpt-5', diagnostics: { x: 1 } });
    expect(only!.prefix).toBeUndefined();
  });

  it('names the same origin whatever order two parts that disagree on it arrive in', () => {
    const [low, high, usageTrace] = ['1'.repeat(32), 'f'.repeat(32), 'a'.repeat(32)];
    const orders = (events: CacheEvent[]): CacheEvent[][] =>
      events.length <= 1 ? [events] : events.flatMap((e, i) => orders(events.filter((_, j) => j !== i)).map((rest) => [e, ...rest]));
    const originOf = (events: CacheEvent[]) => {
      const { traceId, spanId, agentVersion } = toTurn(events.reduce<TurnParts | undefined>((parts, e) => mergeEvent(parts, e).parts, undefined)!)!;
      return { traceId, spanId, agentVersion };
    };
    const answer = (of: CacheEvent[]) => new Set(orders(of).map((events) => JSON.stringify(originOf(events))));
    const u = (origin: object): CacheEvent => ({ type: 'usage', requestId: 'r1', usage: usage(40_000, 900), ...origin });
    // Two snapshots (a log record and a span of one call) with different traces, and a usage with a third: the snapshots' smaller one.
    const snapshots = [turn('r1', { traceId: high, agentVersion: '2.1.0' }), turn('r1', { traceId: low, spanId: 'b'.repeat(16) }), u({ traceId: usageTrace, agentVersion: '2.0.0' })];
    expect([...answer(snapshots)]).toEqual([JSON.stringify({ traceId: low, spanId: 'b'.repeat(16), agentVersion: '2.1.0' })]);
    // A snapshot that names no trace, and two usages that disagree: the usages' smaller one.
    const usages = [turn('r1'), u({ traceId: high }), u({ traceId: usageTrace })];
    expect([...answer(usages)]).toEqual([JSON.stringify({ traceId: usageTrace })]);
  });
});
