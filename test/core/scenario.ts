// Builds realistic turn events for core tests without repeating every field.
import { hashString } from '../../src/core/hash.js';
import { DEFAULT_DETECTION, type DetectionOptions } from '../../src/core/options.js';
import type { ModelPrice } from '../../src/core/prices.js';
import { evaluateEvents } from '../../src/core/stream.js';
import type { CacheEvent, Evaluation, ToolRef, TurnEvent, Usage } from '../../src/core/types.js';

export const T0 = Date.parse('2026-11-30T10:00:00.000Z');
export const SECOND = 1000;
export const MINUTE = 60 * SECOND;

export const SEED_TOOLS = ['read_file', 'shell', 'mcp__filesystem__read_tree', 'mcp__github__search_issues'];

export function tools(names: string[], version: Record<string, number> = {}): ToolRef[] {
  return names.map((name) => ({ name, schemaHash: hashString(`${name}@${version[name] ?? 1}`) }));
}

export function usage(read: number, write: number, uncached = 120, write1h = 0): Usage {
  return { uncached, read, write, write1h, output: 300, cacheReported: true, writeReported: true };
}

export interface TurnSpec extends Partial<Omit<TurnEvent, 'type' | 'requestId'>> {
  at?: number;
}

/** A turn event with the seed's defaults: Anthropic, four tools, two system blocks. */
export function turn(requestId: string, spec: TurnSpec = {}): TurnEvent {
  const { at = 0, ...rest } = spec;
  const event: TurnEvent = {
    type: 'turn',
    requestId,
    sessionId: 'sess_A',
    agentId: 'main',
    ts: T0 + at,
    endTs: T0 + at + 4 * SECOND,
    provider: 'anthropic',
    model: 'claude-sonnet-4-5',
    systemBlockHashes: [hashString('billing'), hashString('You are a coding agent.')],
    tools: tools(SEED_TOOLS),
    cacheControl: { enabled: true, ttl: '5m', scope: 'tools+system+messages', markers: ['system:1', 'messages:-1'] },
    usage: usage(0, 48_900),
    ...rest,
  };
  return event;
}

/** List prices (USD per MTok) the core tests price breaks with; the service gets its own from a price database. */
export const TEST_PRICES: Record<string, ModelPrice> = {
  'claude-sonnet-4-5': { input: 3, cacheRead: 0.3, cacheWrite: 3.75, cacheWrite1h: 6 },
  'gpt-4o': { input: 2.5, cacheRead: 1.25, cacheWrite: 2.5, cacheWrite1h: 2.5 },
};

export const TEST_OPTIONS: DetectionOptions = { ...DEFAULT_DETECTION, prices: (model) => TEST_PRICES[model] };

export function evaluate(events: CacheEvent[], options: DetectionOptions = TEST_OPTIONS): Map<string, Evaluation> {
  return new Map(evaluateEvents(events, options).map((e) => [e.requestId, e]));
}

export function breaksOf(evaluations: Map<string, Evaluation>) {
  return [...evaluations.values()].flatMap((e) => (e.break ? [e.break] : []));
}

/** The same turn event as a client would POST it: RFC 3339 time, normalised token fields. */
export function toWire(event: TurnEvent): Record<string, unknown> {
  const { usage: u, ts, ...rest } = event;
  return {
    ...rest,
    ts: new Date(ts).toISOString(),
    uncachedInputTokens: u.uncached,
    cacheReadInputTokens: u.read,
    cacheWriteInputTokens: u.write,
    cacheWrite1hInputTokens: u.write1h,
    outputTokens: u.output,
  };
}
