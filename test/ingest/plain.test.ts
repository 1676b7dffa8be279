// The fast path may only ever accept what zod accepts, with the same content:
// random events, valid and broken in every field, are judged by both.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { plainlyValid } from '../../src/ingest/http/plain.js';
import { EVENT_SCHEMAS, type EventType } from '../../src/ingest/http/schema.js';

/** Mostly valid, sometimes broken: each field fails on its own often enough to matter. */
const mostly = <T, U>(valid: fc.Arbitrary<T>, broken: fc.Arbitrary<U>) => fc.oneof({ arbitrary: valid, weight: 12 }, { arbitrary: broken, weight: 1 });
const text = (max: number) =>
  mostly(fc.string({ minLength: 1, maxLength: Math.min(max, 12) }), fc.oneof(fc.constant(''), fc.string({ minLength: max, maxLength: max + 3 })));
const anyValue = fc.oneof(fc.constant(undefined), fc.constant(null), fc.boolean(), fc.integer(), fc.double(), fc.string({ maxLength: 5 }), fc.constant([]), fc.constant({}));
const ts = fc.oneof(
  fc.nat(),
  fc.integer({ min: -5, max: 2 ** 53 + 5 }),
  fc.double(),
  fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
  fc.constantFrom('2026-02-31T00:00:00Z', '2026-11-30T10:00:00+02:00', '2026-11-30T10:00:00.123456Z', '2026-11-30 10:00:00Z', 'yesterday'),
);
const tokens = mostly(fc.oneof(fc.constant(undefined), fc.nat(), fc.constant('120')), fc.oneof(fc.integer({ min: -3, max: -1 }), fc.double(), fc.constantFrom('-1', '1.5', 'abc', '')));
const millis = mostly(
  fc.oneof(fc.constant(undefined), fc.nat(), fc.double({ min: 0, max: 1e6, noNaN: true })),
  fc.oneof(fc.integer({ min: -3, max: -1 }), fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY, '850', null)),
);
const tool = mostly(
  fc.record({ name: text(256), schemaHash: text(256) }),
  fc.oneof(
  fc.record({ name: text(8), schemaHash: text(8), description: fc.string() }),
  fc.record({ name: anyValue, schemaHash: text(8) }),
  ),
);
const cacheControl = mostly(
  fc.oneof(
    fc.constant(undefined),
    fc.record(
      { enabled: fc.boolean(), ttl: fc.string({ maxLength: 8 }), scope: fc.string({ maxLength: 8 }), markers: fc.array(fc.string({ maxLength: 8 }), { maxLength: 3 }), key: fc.string({ maxLength: 8 }) },
      { requiredKeys: [] },
    ),
  ),
  fc.oneof(
    fc.record({ enabled: anyValue, ttl: fc.string({ maxLength: 40 }), scope: fc.string({ maxLength: 130 }), markers: fc.array(fc.string({ maxLength: 8 }), { maxLength: 70 }), other: fc.string() }, { requiredKeys: [] }),
    anyValue,
  ),
);
const strings = (items: number) => mostly(fc.oneof(fc.constant(undefined), fc.array(text(256), { maxLength: items })), anyValue);

const event = fc.record(
  {
    requestId: text(256),
    sessionId: mostly(text(256), anyValue),
    agentId: mostly(fc.oneof(fc.constant(undefined), text(256)), anyValue),
    ts,
    endTs: fc.oneof(fc.constant(undefined), ts),
    provider: mostly(text(64), fc.oneof(fc.constant(undefined), anyValue)),
    model: mostly(text(256), fc.oneof(fc.constant(undefined), anyValue)),
    systemHash: mostly(fc.oneof(fc.constant(undefined), text(256)), anyValue),
    systemBlockHashes: strings(4),
    tools: mostly(fc.oneof(fc.constant(undefined), fc.array(tool, { maxLength: 4 })), anyValue),
    cacheControl,
    cacheControlHash: fc.oneof(fc.constant(undefined), text(256)),
    messageHashes: strings(4),
    messageBlockCounts: mostly(
      fc.oneof(fc.constant(undefined), fc.array(fc.nat({ max: 40 }), { maxLength: 4 })),
      fc.oneof(fc.array(fc.oneof(fc.integer({ min: -2, max: -1 }), fc.double(), fc.constant(2_000_000), fc.constant('3')), { minLength: 1, maxLength: 3 }), anyValue),
    ),
    prefixChars: mostly(
      fc.oneof(fc.constant(undefined), fc.array(fc.nat(), { maxLength: 5 })),
      fc.oneof(fc.array(fc.oneof(fc.integer({ min: -2, max: -1 }), fc.double(), fc.constant(2 ** 53), fc.constant('3')), { minLength: 1, maxLength: 3 }), anyValue),
    ),
    expectMiss: fc.oneof(fc.constant(undefined), text(64)),
    agentVersion: mostly(fc.oneof(fc.constant(undefined), text(128)), anyValue),
    traceId: mostly(fc.oneof(fc.constant(undefined), fc.stringMatching(/^[0-9a-fA-F]{32}$/)), fc.oneof(fc.stringMatching(/^[0-9a-f]{31}$/), fc.constant('z'.repeat(32)), anyValue)),
    spanId: mostly(fc.oneof(fc.constant(undefined), fc.stringMatching(/^[0-9a-fA-F]{16}$/)), fc.oneof(fc.stringMatching(/^[0-9a-f]{17}$/), fc.constant('g'.repeat(16)), anyValue)),
    system: mostly(fc.constant(undefined), fc.string()),
    usage: fc.oneof(fc.constant(undefined), fc.object()),
    uncachedInputTokens: tokens,
    cacheReadInputTokens: tokens,
    cacheWriteInputTokens: tokens,
    cacheWrite1hInputTokens: tokens,
    outputTokens: tokens,
    ttftMs: millis,
    unknownField: fc.oneof(fc.constant(undefined), fc.string()),
  },
  { requiredKeys: ['requestId', 'sessionId', 'ts', 'provider', 'model'] },
);

/** What the schema reads of an event: its declared keys. */
function declared(type: EventType, e: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(EVENT_SCHEMAS[type].shape)) if (e[key] !== undefined) out[key] = e[key];
  return out;
}

describe('the plain-event fast path', () => {
  it.each(['snapshot', 'usage', 'turn'] as EventType[])('accepts a %s only when zod accepts it, with the same content', (type) => {
    let accepted = 0;
    fc.assert(
      fc.property(event, (raw) => {
        const e = { ...raw, type } as Record<string, unknown>;
        if (!plainlyValid(type, e)) return;
        accepted++;
        const parsed = EVENT_SCHEMAS[type].safeParse(e);
        expect(parsed.success).toBe(true);
        expect(parsed.data).toEqual(declared(type, e));
      }),
      { numRuns: 3_000 },
    );
    // The generator must reach the fast path often enough for this to mean something.
    expect(accepted).toBeGreaterThan(100);
  });

  it('takes the realistic events clients send', () => {
    const turn = {
      type: 'turn', requestId: 'req_1', sessionId: 's', agentId: 'main', ts: '2026-11-30T10:00:00Z', endTs: 1796032804000, ttftMs: 850,
      provider: 'anthropic', model: 'claude-sonnet-4-5', systemBlockHashes: ['a', 'b'], tools: [{ name: 'Read', schemaHash: 'x' }],
      cacheControl: { enabled: true, ttl: '5m', scope: 'tools+system+messages', markers: ['system:1@5m'] },
      usage: { input_tokens: 3, cache_read_input_tokens: 40_000 },
    };
    expect(plainlyValid('turn', turn)).toBe(true);
    expect(plainlyValid('turn', { ...turn, tools: [{ name: 'Read', schemaHash: 'x', description: 'Reads.' }] })).toBe(false);
  });
});
