// Fan-out "written again" counts only what the requests could have shared:
// tools, system and the leading messages equal to the first's, sized from the
// raw bodies (SnapshotContent.prefixChars); each request's own prompt is its
// own write, not a repeat.
import { describe, expect, it } from 'vitest';
import { fanOuts, type ColdTurn } from '../../src/core/insights/fanout.js';
import { extraCostUsd } from '../../src/core/prices.js';
import { buildSnapshot } from '../../src/core/snapshot/index.js';
import type { SnapshotContent } from '../../src/core/types.js';
import { priceLookup } from '../../src/prices/index.js';

const MODEL = 'claude-sonnet-4-5';
const TOOLS = [
  { name: 'Read', description: 'Reads a file.', input_schema: { type: 'object', properties: { path: { type: 'string' } } } },
  { name: 'Bash', description: 'Runs a command.', input_schema: { type: 'object', properties: { command: { type: 'string' } } } },
];
/** Even in JSON length with the tools, so an own prompt can be exactly half of them. */
const SYSTEM = 'You are a subagent.' + ((JSON.stringify(TOOLS).length + JSON.stringify('You are a subagent.').length) % 2 === 0 ? '' : '!');
const TOOLS_SYSTEM_CHARS = JSON.stringify(TOOLS).length + JSON.stringify(SYSTEM).length;

/** A user message whose JSON is `chars` characters long. */
function prompt(task: string, chars: number): { role: string; content: string } {
  const empty = JSON.stringify({ role: 'user', content: task }).length;
  return { role: 'user', content: task + '.'.repeat(chars - empty) };
}

function snapshot(messages: unknown[]): SnapshotContent {
  const built = buildSnapshot({ model: MODEL, max_tokens: 1024, tools: TOOLS, system: SYSTEM, messages }, 'anthropic');
  if (!built.ok) throw new Error(built.error);
  return built.snapshot;
}

/** A cold turn as the store reads it, from the snapshot of its body; hash-only events have no size estimate. */
function cold(id: string, at: number, write: number, content: SnapshotContent, sized = true): ColdTurn {
  return {
    requestId: id, sessionId: 'sess', agentId: `task-${id}`, ts: at, model: MODEL, provider: 'anthropic',
    systemHash: content.systemHash ?? null, toolsHash: 'tools', write, write1h: 0,
    messageHashes: content.messageHashes ?? null,
    prefixChars: sized ? (content.prefixChars ?? null) : null,
  };
}

const prices = priceLookup();
const sonnet = prices(MODEL, 'anthropic')!;
const extra = (tokens: number) => extraCostUsd(sonnet, tokens, 'explicit', { write: tokens, write1h: 0 });

describe('fan-out: only the shareable part is written again', () => {
  // Four Task subagents start together: 10,000 tokens of tools and system, then a 5,000-token prompt of their own.
  const bodies = ['a', 'b', 'c', 'd'].map((id) => snapshot([prompt(`Task ${id}: `, TOOLS_SYSTEM_CHARS / 2)]));

  it('sizes a raw body: tools and system, then the running total per message', () => {
    expect(bodies[0]!.prefixChars).toEqual([TOOLS_SYSTEM_CHARS, TOOLS_SYSTEM_CHARS * 1.5]);
    const two = snapshot([prompt('x', 100), { role: 'assistant', content: 'ok' }]);
    expect(two.prefixChars).toEqual([TOOLS_SYSTEM_CHARS, TOOLS_SYSTEM_CHARS + 100, TOOLS_SYSTEM_CHARS + 100 + JSON.stringify({ role: 'assistant', content: 'ok' }).length]);
    expect(two.messageHashes).toHaveLength(2);
  });

  it('4 parallel Sonnet subagents: 3 × 10,000 written again, not 3 × 15,000', () => {
    const sized = fanOuts(bodies.map((b, i) => cold('abcd'[i]!, 1_000 + i * 200, 15_000, b)), prices, 10);
    expect(sized.writtenAgainTokens).toBe(30_000);
    expect(sized.fanOuts[0]).toMatchObject({ turns: 4, writtenOnceTokens: 15_000, writtenAgainTokens: 30_000 });
    // Sonnet 4.5: a 5-minute write $3.75/M, a read $0.30/M.
    expect(sized.cost.usd).toBe(extra(30_000));
    expect(sized.cost.usd).toBeCloseTo(0.1035, 6);

    // The same requests as hash-only events: no size estimate, so the whole write counts, own prompts included.
    const hashOnly = fanOuts(bodies.map((b, i) => cold('abcd'[i]!, 1_000 + i * 200, 15_000, b, false)), prices, 10);
    expect(hashOnly.writtenAgainTokens).toBe(45_000);
    expect(hashOnly.cost.usd).toBeCloseTo(0.15525, 6);
  });

  it('counts leading messages the requests have in common as shareable, and never more than the first wrote', () => {
    const briefing = prompt('Shared briefing: ', TOOLS_SYSTEM_CHARS / 2);
    const first = snapshot([briefing, prompt('Task a: ', TOOLS_SYSTEM_CHARS / 2)]);
    const second = snapshot([briefing, prompt('Task b: ', TOOLS_SYSTEM_CHARS / 2)]);
    // 10,000 tools and system + 5,000 briefing shared of 20,000.
    expect(fanOuts([cold('a', 0, 20_000, first), cold('b', 100, 20_000, second)], prices, 10).writtenAgainTokens).toBe(15_000);
    // The first wrote less (part was cached already): what it wrote bounds the repeat.
    expect(fanOuts([cold('a', 0, 9_000, first), cold('b', 100, 20_000, second)], prices, 10).writtenAgainTokens).toBe(9_000);
    // A first turn without message hashes: what it shared is unknown, so today's figure.
    const unknown = { ...cold('a', 0, 20_000, first), messageHashes: null };
    expect(fanOuts([unknown, cold('b', 100, 20_000, second)], prices, 10).writtenAgainTokens).toBe(20_000);
  });
});
