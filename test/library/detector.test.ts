// The Detector in a harness's process: completed requests in, each turn's
// state and break record out, equal to the core's reference evaluation; its
// memory bounded by sessions, turns per stream and waiting events (in bytes:
// detector-memory.test.ts); breaks reported as a logfmt line, an OTel log
// record or a callback.
import { logs as otelLogs } from '@opentelemetry/api-logs';
import { logs } from '@opentelemetry/sdk-node';
import { afterEach, describe, expect, it } from 'vitest';
import { evaluateEvents } from '../../src/core/stream.js';
import type { BreakRecord, TurnEvent } from '../../src/core/types.js';
import { breakFields } from '../../src/telemetry/break-line.js';
import { logfmt } from '../../src/telemetry/logfmt.js';
import { breakLine, defaultEmitter, Detector, logfmtEmitter, otelEmitter, type CompletedRequest } from '../../src/detector/index.js';
import { MINUTE, SEED_TOOLS, TEST_OPTIONS, tools, turn, usage } from '../core/scenario.js';

/** A long session: every 7th turn re-orders the tools, every 11th comes after the 5-minute TTL. */
function session(count: number, sessionId = 'sess_A'): TurnEvent[] {
  let at = 0;
  return Array.from({ length: count }, (_, i) => {
    at += i % 11 === 10 ? 6 * MINUTE : 10_000;
    const order = Math.floor(i / 7) % 2 === 0 ? SEED_TOOLS : [...SEED_TOOLS].reverse();
    const changed = i > 0 && (i % 7 === 0 || i % 11 === 10);
    return turn(`${sessionId}_${i}`, { sessionId, at, tools: tools(order), usage: changed ? usage(0, 50_000) : i === 0 ? usage(0, 50_000) : usage(50_000, 500) });
  });
}

/** The completed request a harness would hand over for a turn event. */
function completed(event: TurnEvent): CompletedRequest {
  const { type: _, requestId, sessionId, agentId, ts, endTs, ttftMs, provider, usage: u, expectMiss, diagnostics, ...snapshot } = event;
  return { requestId, sessionId, agentId, ts, endTs, ttftMs, provider, usage: u, expectMiss, diagnostics, snapshot } as CompletedRequest;
}

const plain = <T extends { writerTiers?: unknown }>({ writerTiers: _, ...rest }: T) => rest;

describe('Detector', () => {
  it('judges each completed request as the reference evaluation does, and reports each break once', () => {
    const events = session(60);
    const reference = new Map(evaluateEvents(events, TEST_OPTIONS).map((e) => [e.requestId, plain(e)]));
    const reported: BreakRecord[] = [];
    const detector = new Detector({ prices: TEST_OPTIONS.prices, onBreak: (record) => reported.push(record) });
    for (const event of events) expect(detector.observe(completed(event)), event.requestId).toEqual(reference.get(event.requestId));
    const breaks = [...reference.values()].flatMap((e) => (e.break ? [e.break] : []));
    expect(breaks.map((b) => b.reason)).toContain('tools_order_changed');
    expect(breaks.map((b) => b.reason)).toContain('likely_provider_ttl_or_eviction');
    expect(reported).toEqual(breaks);
    expect(breaks.every((b) => b.estimatedExtraCostUsd !== null && b.estimatedExtraCostUsd > 0)).toBe(true);
    // A repeat tells nothing new.
    expect(detector.observe(completed(events[5]!))).toBeUndefined();
  });

  it('leaves the cost of a break null, not $0, without prices (SPEC §4.10)', () => {
    const detector = new Detector();
    const found = session(10).map((event) => detector.observe(completed(event))!.break).filter((b) => b !== null);
    expect(found.length).toBeGreaterThan(0);
    expect(found.every((b) => b.estimatedExtraCostUsd === null)).toBe(true);
  });

  it('keeps at most maxTurnsPerStream turns, and judges in-order requests exactly as with all of them', () => {
    const events = session(60);
    const reference = new Map(evaluateEvents(events, TEST_OPTIONS).map((e) => [e.requestId, plain(e)]));
    const detector = new Detector({ prices: TEST_OPTIONS.prices, maxTurnsPerStream: 4 });
    for (const event of events) expect(detector.observe(completed(event)), event.requestId).toEqual(reference.get(event.requestId));
    expect(detector.stats.turnsFolded).toBe(56);
    expect(detector.evaluation('sess_A_0')).toBeUndefined();
    expect(detector.evaluation('sess_A_59')).toEqual(reference.get('sess_A_59'));
    // Older than every turn kept: not judged, counted.
    const late = turn('late', { at: 5_000, usage: usage(0, 50_000) });
    expect(detector.observe(completed(late))).toBeUndefined();
    expect(detector.stats.tooLate).toBe(1);
  });

  it('re-judges the later turns of a stream when an earlier request completes last', () => {
    const events = session(8);
    const reference = new Map(evaluateEvents(events, TEST_OPTIONS).map((e) => [e.requestId, plain(e)]));
    const detector = new Detector({ prices: TEST_OPTIONS.prices });
    const [first, ...rest] = events;
    for (const event of rest) detector.observe(completed(event));
    const changed = detector.add(first!);
    expect(changed.map((e) => e.requestId)).toContain(first!.requestId);
    for (const event of events) expect(detector.evaluation(event.requestId), event.requestId).toEqual(reference.get(event.requestId));
  });

  it('forgets the least recently active session beyond maxSessions, and waiting events beyond maxWaiting', () => {
    const detector = new Detector({ maxSessions: 2, maxWaiting: 1 });
    for (const id of ['s1', 's2', 's3']) for (const event of session(2, id)) detector.observe(completed(event));
    expect(detector.stats.sessionsEvicted).toBe(1);
    expect(detector.evaluation('s1_1')).toBeUndefined();
    expect(detector.evaluation('s3_1')?.state).toBe('hit');
    // Usage that names no session waits for its snapshot; only maxWaiting of them.
    for (const requestId of ['u1', 'u2']) expect(detector.add({ type: 'usage', requestId, usage: usage(0, 10) })).toEqual([]);
    expect(detector.stats.waitingDropped).toBe(1);
  });
});

describe('prompt_cache_break emitters', () => {
  const [record] = session(8)
    .map((event, _, all) => evaluateEvents(all, TEST_OPTIONS).find((e) => e.requestId === event.requestId)!.break)
    .filter((b) => b !== null);

  afterEach(() => otelLogs.disable());

  it('writes the line the server logs', () => {
    const lines: string[] = [];
    logfmtEmitter((line) => lines.push(line))(record!);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^ts=\S+ level=warn event=prompt_cache_break reason=tools_order_changed /);
    const now = new Date('2026-12-01T00:00:00Z');
    expect(breakLine(record!, now)).toBe(logfmt({ ts: now.toISOString(), level: 'warn', event: 'prompt_cache_break', ...breakFields(record!) }));
  });

  it('emits an OTel log record with the SPEC §6 fields, to a given logger or the global provider', async () => {
    const exporter = new logs.InMemoryLogRecordExporter();
    const provider = new logs.LoggerProvider({ processors: [new logs.SimpleLogRecordProcessor({ exporter })] });
    otelEmitter(provider.getLogger('test'), 'proj')(record!);
    otelLogs.setGlobalLoggerProvider(provider);
    (await defaultEmitter())(record!);
    const emitted = exporter.getFinishedLogRecords();
    expect(emitted).toHaveLength(2);
    for (const log of emitted) {
      expect(log.eventName).toBe('prompt_cache_break');
      expect(log.severityText).toBe('WARN');
      expect(log.attributes).toMatchObject({ reason: 'tools_order_changed', requestId: record!.requestId, changedToolNames: record!.changedToolNames, missedCacheReadTokens: record!.missedCacheReadTokens });
    }
    expect(emitted.map((log) => log.attributes.project)).toEqual(['proj', 'default']);
    await provider.shutdown();
  });
});
