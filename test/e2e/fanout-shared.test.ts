// Fan-out cold starts end to end: four Sonnet subagents start together through
// a real `cachebreak proxy` (raw request bodies) to a mock Anthropic API, each
// with 10,000 tokens of tools and system and a 5,000-token prompt of its own.
// /v1/insights/fanout counts only the shared part as written again; the same
// four requests sent as hash-only events (no size estimate) still count their
// whole writes. Both stores answer the same.
import { describe, expect, it } from 'vitest';
import { anthropicAnswer, mockUpstream } from '../proxy/upstreams.js';
import { waitFor } from '../proxy/wait.js';
import { anthropicUsage, iso, opaqueHash, toolRefs } from './events.js';
import { getJson, postEvents, startServer } from './server.js';

interface FanOutReply {
  fanOuts: { model: string; turns: number; sessions: number; requestIds: string[]; writtenOnceTokens: number; writtenAgainTokens: number; cost: { usd: number | null } }[];
  writtenAgainTokens: number;
  cost: { usd: number | null };
}

const TOOLS = [
  { name: 'Read', description: 'Reads a file.', input_schema: { type: 'object', properties: { path: { type: 'string' } } } },
  { name: 'Bash', description: 'Runs a command.', input_schema: { type: 'object', properties: { command: { type: 'string' } } } },
];
const SYSTEM_TEXT = 'You are a subagent.';
// Tools and system as JSON, made even so that an own prompt can be half of it.
const SYSTEM = SYSTEM_TEXT + ((JSON.stringify(TOOLS).length + JSON.stringify(SYSTEM_TEXT).length) % 2 === 0 ? '' : '!');
const TOOLS_SYSTEM_CHARS = JSON.stringify(TOOLS).length + JSON.stringify(SYSTEM).length;

/** A subagent's own prompt, half the size of the tools and system: 5,000 tokens to their 10,000. */
function ownPrompt(task: string): { role: string; content: string } {
  const empty = JSON.stringify({ role: 'user', content: task }).length;
  return { role: 'user', content: task + '.'.repeat(TOOLS_SYSTEM_CHARS / 2 - empty) };
}

describe('fan-out through the proxy', () => {
  it('four parallel subagents: 3 × 10,000 tokens written again from raw bodies, 3 × 15,000 from hash-only events', async () => {
    const usage = { input_tokens: 3, cache_read_input_tokens: 0, cache_creation_input_tokens: 15_000 };
    const upstream = await mockUpstream((request) => anthropicAnswer(request, usage, `req_${upstream.received.length}`));
    try {
      const server = await startServer({ command: 'proxy', args: ['--anthropic-upstream', upstream.url] });
      const start = Date.now();
      for (const task of ['a', 'b', 'c', 'd']) {
        const response = await fetch(`${server.proxyUrl}/anthropic/v1/messages`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-key': 'sk-ant-test', 'anthropic-version': '2023-06-01', 'x-cachebreak-session': `task-${task}` },
          body: JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 1024, tools: TOOLS, system: SYSTEM, messages: [ownPrompt(`Task ${task}: `)] }),
        });
        expect(response.status).toBe(200);
        await response.arrayBuffer();
      }
      // The same fan-out as a harness without raw bodies sends it: hashes only, another system prompt.
      const hashed = ['a', 'b', 'c', 'd'].map((task, i) => ({
        type: 'turn', requestId: `hashed-${task}`, sessionId: `hashed-${task}`, ts: iso(start + i * 100), provider: 'anthropic',
        model: 'claude-sonnet-4-5', systemHash: opaqueHash('hashed system'), tools: toolRefs(['Read', 'Bash']),
        messageHashes: [opaqueHash(`task ${task}`)], usage: anthropicUsage(0, 15_000, 3),
      }));
      expect((await postEvents(server.url, hashed)).body).toEqual({ accepted: 4, duplicates: 0, rejected: [] });

      const path = `/v1/insights/fanout?from=${start - 60_000}&to=${Date.now() + 60_000}`;
      const reply = await waitFor(
        'both fan-outs',
        () => getJson<FanOutReply>(server.url, path),
        (found) => found.fanOuts.length === 2 && found.fanOuts.every((f) => f.turns === 4),
      );
      const [hashOnly, fromBodies] = reply.fanOuts;
      // Sonnet 4.5: $3.75/M to write, $0.30/M to read: $3.45/M beyond reading.
      expect(hashOnly).toMatchObject({ turns: 4, sessions: 4, writtenOnceTokens: 15_000, writtenAgainTokens: 45_000, cost: { usd: 0.15525 } });
      expect(hashOnly!.requestIds[0]).toBe('hashed-a');
      expect(fromBodies).toMatchObject({ model: 'claude-sonnet-4-5', turns: 4, sessions: 4, writtenOnceTokens: 15_000, writtenAgainTokens: 30_000, cost: { usd: 0.1035 } });
      expect(reply).toMatchObject({ writtenAgainTokens: 75_000, cost: { usd: 0.25875 } });
    } finally {
      await upstream.close();
    }
  });

  it('refuses size estimates that do not fit the message hashes or do not run up, naming the field, and stores the rest', async () => {
    const server = await startServer();
    const event = (requestId: string, prefixChars: number[]) => ({
      type: 'turn', requestId, sessionId: requestId, ts: iso(Date.now()), provider: 'anthropic', model: 'claude-sonnet-4-5',
      messageHashes: [opaqueHash('one'), opaqueHash('two')], prefixChars, usage: anthropicUsage(0, 15_000, 3),
    });
    const reply = await postEvents(server.url, [event('short', [100, 150]), event('falling', [100, 150, 120]), event('good', [100, 150, 170])]);
    expect(reply.body).toMatchObject({
      accepted: 1,
      rejected: [
        { index: 0, field: 'prefixChars', error: expect.stringContaining('one per messageHashes entry (3), got 2') },
        { index: 1, field: 'prefixChars', error: expect.stringContaining('running totals') },
      ],
    });
  });
});
