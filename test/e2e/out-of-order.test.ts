// SPEC §4.8: for any permutation of a stream's events, with duplicates, the
// final states and break records equal those of in-order delivery. Checked
// on real servers: one fed in order, others fed shuffled batches in which
// every snapshot arrives after its usage.
import { describe, expect, it } from 'vitest';
import { everything, turnsOf } from './api.js';
import { prng, REORDERED_TOOLS, shuffle, splitTurn, type Step, type WireEvent } from './events.js';
import { postEvents, startServer } from './server.js';

const SESSION = 'sess_C';
const SYSTEM = (date: string) => ['x-anthropic-billing-header: cc_version=2.0.50', 'You are Claude Code.', `Today's date is ${date}.`];
const EXPLORE_TOOLS = ['read_file', 'shell'];
const EXPLORE_SYSTEM = ['You are a file search specialist.'];

/** A Claude Code session with a subagent, and one break of each kind the prefix can tell. */
const STEPS: Step[] = [
  { requestId: 'm01', at: 0, systemBlocks: SYSTEM('2026-11-30'), messages: 1, read: 0, write: 50_000 },
  { requestId: 'm02', at: 10, systemBlocks: SYSTEM('2026-11-30'), messages: 2, read: 50_000, write: 1_000 },
  // A subagent interleaved with the main agent: its own stream, never a break of main's.
  { requestId: 'e01', at: 12, agentId: 'explore', tools: EXPLORE_TOOLS, systemBlocks: EXPLORE_SYSTEM, read: 0, write: 8_000 },
  { requestId: 'm03', at: 20, tools: REORDERED_TOOLS, systemBlocks: SYSTEM('2026-11-30'), messages: 3, read: 0, write: 51_200 },
  { requestId: 'e02', at: 25, agentId: 'explore', tools: EXPLORE_TOOLS, systemBlocks: EXPLORE_SYSTEM, read: 8_000, write: 500 },
  { requestId: 'm04', at: 30, tools: REORDERED_TOOLS, systemBlocks: SYSTEM('2026-11-30'), messages: 4, read: 51_200, write: 700 },
  // Midnight: the date block of the system prompt changed.
  { requestId: 'm05', at: 40, tools: REORDERED_TOOLS, systemBlocks: SYSTEM('2026-12-01'), messages: 5, read: 0, write: 52_000 },
  { requestId: 'm06', at: 50, tools: REORDERED_TOOLS, systemBlocks: SYSTEM('2026-12-01'), messages: 6, read: 52_000, write: 800 },
  // Compaction, declared by the harness: visible, not a break.
  { requestId: 'm07', at: 60, tools: REORDERED_TOOLS, systemBlocks: SYSTEM('2026-12-01'), messages: 2, rewrite: true, expectMiss: 'compaction', read: 0, write: 20_000 },
  { requestId: 'm08', at: 70, tools: REORDERED_TOOLS, systemBlocks: SYSTEM('2026-12-01'), messages: 3, rewrite: true, read: 20_000, write: 600 },
  // Eight idle minutes: past the declared 5m TTL.
  { requestId: 'm09', at: 550, tools: REORDERED_TOOLS, systemBlocks: SYSTEM('2026-12-01'), messages: 4, rewrite: true, read: 0, write: 20_600 },
  // History edited without a declaration.
  { requestId: 'm10', at: 560, tools: REORDERED_TOOLS, systemBlocks: SYSTEM('2026-12-01'), messages: 5, read: 0, write: 21_000 },
];

const PAIRS = STEPS.map((step, i) => splitTurn(SESSION, step, i % 2 === 0));

/** Real-time delivery: each request's snapshot, then its usage, one POST per request. */
const IN_ORDER: WireEvent[][] = PAIRS.map(({ snapshot, usage }) => [snapshot, usage]);

/** A seeded permutation, every snapshot after its usage, a few events repeated, cut into batches of 1–4. */
function shuffled(seed: number): WireEvent[][] {
  const random = prng(seed);
  const events = shuffle(
    PAIRS.flatMap(({ snapshot, usage }) => [snapshot, usage]),
    random,
  );
  for (const { snapshot, usage } of PAIRS) {
    const s = events.indexOf(snapshot);
    const u = events.indexOf(usage);
    if (s < u) [events[s], events[u]] = [usage, snapshot];
  }
  for (let i = 0; i < 4; i++) {
    const repeat = events[Math.floor(random() * events.length)]!;
    events.splice(Math.floor(random() * (events.length + 1)), 0, repeat);
  }
  const batches: WireEvent[][] = [];
  for (let at = 0; at < events.length; ) {
    const size = 1 + Math.floor(random() * 4);
    batches.push(events.slice(at, at + size));
    at += size;
  }
  return batches;
}

async function deliver(batches: WireEvent[][]) {
  const server = await startServer();
  let accepted = 0;
  let duplicates = 0;
  for (const batch of batches) {
    const reply = await postEvents(server.url, batch);
    expect(reply.status).toBe(200);
    const body = reply.body as { accepted: number; duplicates: number; rejected: unknown[] };
    expect(body.rejected).toEqual([]);
    accepted += body.accepted;
    duplicates += body.duplicates;
  }
  return { server, accepted, duplicates };
}

const SEEDS = [1, 7, 2026];

describe('out-of-order delivery against real servers', () => {
  it('shuffled, usage-first, split and repeated delivery stores what in-order delivery stores', async () => {
    const [reference, ...runs] = await Promise.all([deliver(IN_ORDER), ...SEEDS.map((seed) => deliver(shuffled(seed)))]);

    // The reference itself is right, so agreeing with it means something.
    expect(reference.accepted).toBe(PAIRS.length * 2);
    const turns = await turnsOf(reference!.server.url, SESSION);
    expect(turns.map((t) => [t.requestId, t.agentId, t.state, t.break?.reason ?? null, t.break?.previousRequestId ?? null])).toEqual([
      ['m01', 'main', 'cold', null, null],
      ['m02', 'main', 'hit', null, null],
      ['e01', 'explore', 'cold', null, null],
      ['m03', 'main', 'miss', 'tools_order_changed', 'm02'],
      ['e02', 'explore', 'hit', null, null],
      ['m04', 'main', 'hit', null, null],
      ['m05', 'main', 'miss', 'system_changed', 'm04'],
      ['m06', 'main', 'hit', null, null],
      ['m07', 'main', 'expected', null, null],
      ['m08', 'main', 'hit', null, null],
      ['m09', 'main', 'miss', 'likely_provider_ttl_or_eviction', 'm08'],
      ['m10', 'main', 'miss', 'messages_rewritten', 'm09'],
    ]);
    const byId = new Map(turns.map((t) => [t.requestId, t.break]));
    expect(byId.get('m03')).toMatchObject({ changedToolNames: ['mcp__filesystem__read_tree', 'mcp__github__search_issues'] });
    expect(byId.get('m05')).toMatchObject({ changedSystemBlocks: [2] });
    expect(byId.get('m09')).toMatchObject({ cause: 'ttl_expired', gapMs: 480_000, ttlMs: 300_000, ttlSource: 'declared' });
    expect(byId.get('m10')).toMatchObject({ firstChangedMessageIndex: 0 });

    const expected = await everything(reference!.server.url, [SESSION]);
    // By state: the compaction is the one expected turn, apart from the four misses (each a break).
    const states = new Map<string, number>();
    for (const row of (expected.statsByState as { buckets: { group: string; turns: number }[] }).buckets) states.set(row.group, (states.get(row.group) ?? 0) + row.turns);
    expect(Object.fromEntries(states)).toEqual({ cold: 2, hit: 5, miss: 4, expected: 1 });
    for (const [i, run] of runs.entries()) {
      expect(run.accepted + run.duplicates, `seed ${SEEDS[i]}`).toBe(PAIRS.length * 2 + 4);
      expect(run.accepted, `seed ${SEEDS[i]}`).toBe(PAIRS.length * 2);
      const got = await everything(run.server.url, [SESSION]);
      // Field by field, the most basic first, so a failure says which output differs.
      for (const key of ['turns', 'breaks', 'sessions', 'stats', 'statsByReason', 'statsByState'] as const) {
        expect(got[key], `seed ${SEEDS[i]}: ${key}`).toEqual(expected[key]);
      }
    }
  });
});
