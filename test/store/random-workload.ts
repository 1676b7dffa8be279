// Random workloads for store tests: requests of a few sessions and agents,
// delivered as every shape a harness may use (one turn event, a snapshot and
// a usage, a usage that names no session or no agent, usage or snapshot only).
import fc from 'fast-check';
import { hashString } from '../../src/core/hash.js';
import type { CacheEvent, Evaluation } from '../../src/core/types.js';
import type { Store } from '../../src/store/store.js';
import { T0, tools, turn, usage } from '../core/scenario.js';

export const requestArb = fc.record({
  session: fc.constantFrom('s1', 's2'),
  // A compact stream makes the next main turn of its session expected (SPEC §4.9).
  agent: fc.constantFrom('main', 'main', 'main', 'sub', 'compact'),
  // Few distinct times, so ties (ordered by requestId) are common; some end in the next minute.
  at: fc.constantFrom(0, 58_000, 60_000, 118_000, 120_000, 180_000, 900_000),
  // How long until the answer starts and ends: overlaps with later requests are common (SPEC §4.2).
  ttftMs: fc.constantFrom(undefined, 0, 2_000, 70_000),
  // A usage's time may come from another clock: minutes ahead of the snapshot's, or behind it (SPEC §4.12).
  durationMs: fc.constantFrom(undefined, 4_000, 65_000, 400_000, 180_000, -180_000),
  toolOrder: fc.shuffledSubarray(['read_file', 'shell', 'grep', 'mcp__a__x'], { minLength: 2 }),
  system: fc.constantFrom('a', 'b'),
  // Two ids of one family, another family, and automatic-caching models.
  model: fc.constantFrom('claude-sonnet-4-5', 'claude-sonnet-4-5-20250929', 'claude-opus-4-5', 'gpt-4o', 'gpt-4o-mini'),
  provider: fc.constantFrom('anthropic', 'anthropic', 'bedrock', 'openai', 'deepseek', undefined),
  messages: fc.integer({ min: 0, max: 3 }),
  // Content blocks per message: unknown, one each, or a step of parallel tool calls (the lookback counts blocks).
  blocks: fc.constantFrom(undefined, 1, 13),
  // Markers: none, on the last message, a TTL flip, or on the last two messages (moving every turn).
  markers: fc.constantFrom(undefined, ['system:1@1h', 'messages:-1@5m'], ['system:1@5m', 'messages:-1@5m'], ['messages:0@5m'], ['system:1@5m', 'messages:-2@5m', 'messages:-1@5m']),
  thinking: fc.constantFrom(undefined, { type: 'enabled', budget_tokens: 8000 }),
  read: fc.constantFrom(0, 0, 30_000, 50_000),
  write: fc.constantFrom(0, 2_000, 50_000),
  write1h: fc.constantFrom(0, 0, 2_000),
  writeReported: fc.boolean(),
  reported: fc.integer({ min: 0, max: 9 }).map((n) => n > 0),
  expectMiss: fc.integer({ min: 0, max: 9 }).map((n) => n === 0),
  shape: fc.constantFrom('turn', 'split', 'split-no-session', 'split-no-agent', 'usage-only', 'snapshot-only'),
  // Where the request came from: told by neither part, the snapshot, the usage, or both (the snapshot's span and the usage's version).
  origin: fc.constantFrom(undefined, 'snapshot', 'usage', 'both'),
});
export type Request = typeof requestArb extends fc.Arbitrary<infer R> ? R : never;

/** A delivery of random requests: the requests, the order's randomness, the events sent twice, the batch size. */
export const deliveryArbs = [
  fc.array(requestArb, { minLength: 1, maxLength: 20 }),
  fc.infiniteStream(fc.nat()),
  fc.array(fc.nat(), { maxLength: 6 }),
  fc.integer({ min: 1, max: 7 }),
] as const;

/** Events in a random order, some of them again (`duplicates` picks which). */
export function shuffled(events: readonly CacheEvent[], randomness: fc.Stream<number>, duplicates: readonly number[]): CacheEvent[] {
  return [...events, ...duplicates.map((i) => events[i % events.length]!)]
    .map((event) => ({ event, key: randomness.next().value }))
    .sort((a, b) => a.key - b.key)
    .map((x) => x.event);
}

export function eventsOf(requests: Request[]): CacheEvent[] {
  return requests.flatMap((r, i): CacheEvent[] => {
    const messageHashes = Array.from({ length: r.messages }, (_, m) => hashString(`${r.session}-${m}`));
    const base = turn(`req_${i}`, {
      sessionId: r.session,
      agentId: r.agent,
      at: r.at,
      tools: tools(r.toolOrder),
      systemHash: r.system,
      model: r.model,
      messageHashes,
      ...(r.blocks === undefined ? {} : { messageBlockCounts: messageHashes.map((_, m) => (m === 0 ? 1 : r.blocks!)) }),
      cacheControl: r.markers ? { enabled: true, markers: [...r.markers] } : undefined,
      ...(r.thinking ? { thinking: r.thinking } : {}),
      ...(r.expectMiss ? { expectMiss: 'compaction' } : {}),
      usage: {
        ...usage(r.read, r.write, 120, Math.min(r.write1h, r.write)),
        cacheReported: r.reported,
        writeReported: r.reported && r.writeReported,
      },
    });
    if (r.provider === undefined) delete base.provider;
    else base.provider = r.provider;
    if (r.durationMs === undefined) delete base.endTs;
    else base.endTs = base.ts + r.durationMs;
    if (r.ttftMs !== undefined) base.ttftMs = r.ttftMs;
    const traceId = hashString(`trace-${i}`) + hashString(`trace-${i}/2`);
    if (r.origin === 'snapshot' || r.origin === 'both') Object.assign(base, { traceId, spanId: hashString(`snapshot-span-${i}`) });
    if (r.origin === 'snapshot') base.agentVersion = `1.${i % 3}.0`;
    const { type: _t, usage: u, endTs, ttftMs, diagnostics: _d, ...snapshot } = base;
    const usageEvent: Extract<CacheEvent, { type: 'usage' }> = { type: 'usage', requestId: base.requestId, usage: u };
    if (r.origin === 'usage' || r.origin === 'both') Object.assign(usageEvent, { agentVersion: `2.${i % 3}.0`, traceId, spanId: hashString(`usage-span-${i}`) });
    if (endTs !== undefined) usageEvent.ts = endTs;
    if (ttftMs !== undefined) usageEvent.ttftMs = ttftMs;
    if (r.provider !== undefined) usageEvent.provider = r.provider;
    switch (r.shape) {
      case 'turn':
        return [base];
      case 'split':
        return [{ ...snapshot, type: 'snapshot' }, { ...usageEvent, sessionId: r.session, agentId: r.agent }];
      case 'split-no-session':
        return [{ ...snapshot, type: 'snapshot' }, usageEvent];
      case 'split-no-agent':
        // Placed on the session's main stream until its snapshot moves it to its own.
        return [{ ...snapshot, type: 'snapshot' }, { ...usageEvent, sessionId: r.session }];
      case 'usage-only':
        return [{ ...usageEvent, sessionId: r.session, agentId: r.agent, ts: T0 + r.at }];
      default:
        return [{ ...snapshot, type: 'snapshot' }];
    }
  });
}

export async function storedEvaluations(store: Store): Promise<Evaluation[]> {
  const out: Evaluation[] = [];
  for (const session of ['s1', 's2']) {
    for (const view of (await store.sessionTurns('default', session)) ?? []) {
      if (view.state === null) continue;
      out.push({ requestId: view.requestId, state: view.state, previousRequestId: view.previousRequestId, concurrentRequestIds: view.concurrentRequestIds, break: view.break });
    }
  }
  return out;
}

