// OpenAI Responses requests chained by previous_response_id send only their
// new input: the earlier messages live on OpenAI's side. End to end, as
// turn events through POST /v1/events (with continuesResponse) and as raw
// request bodies through a real `cachebreak proxy` to a mock Responses API:
// a miss is the gap's, or the change the request made, never
// messages_rewritten. Both stores answer the same.
import { describe, expect, it } from 'vitest';
import { mockUpstream, responsesAnswer, type UsageFields } from '../proxy/upstreams.js';
import { waitFor } from '../proxy/wait.js';
import { breaksOf, turnsOf, type WireBreak } from './api.js';
import { iso, opaqueHash, T0, toolRefs, type WireEvent } from './events.js';
import { postEvents, startServer } from './server.js';

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const TOOLS = toolRefs(['get_release', 'list_issues']);

/** A Responses call as a turn event: the first sends its whole input, each next one only its new input. */
function call(n: number, at: number, input: number, cached: number, extra: WireEvent = {}): WireEvent {
  return {
    type: 'turn',
    requestId: `resp-${n}`,
    sessionId: 'chain',
    ts: iso(T0 + at),
    endTs: iso(T0 + at + 2 * SECOND),
    provider: 'openai',
    model: 'gpt-4.1',
    systemBlockHashes: [opaqueHash('You are a release assistant.')],
    tools: TOOLS,
    messageHashes: [opaqueHash(`question ${n}`)],
    ...(n > 1 ? { continuesResponse: true } : {}),
    usage: { input_tokens: input, input_tokens_details: { cached_tokens: cached }, output_tokens: 40 },
    ...extra,
  };
}

describe('a Responses chain through POST /v1/events', () => {
  it('a hit, a miss two hours on (ttl_expired), a new tool (tools_schema_changed): never messages_rewritten', async () => {
    const server = await startServer();
    const events = [
      call(1, 0, 6_000, 0),
      call(2, MINUTE, 6_200, 5_888),
      call(3, MINUTE + 2 * HOUR, 6_400, 0),
      call(4, 2 * MINUTE + 2 * HOUR, 6_900, 0, { tools: toolRefs(['get_release', 'list_issues', 'web_fetch']) }),
    ];
    const reply = await postEvents(server.url, events);
    expect(reply.body).toEqual({ accepted: 4, duplicates: 0, rejected: [] });
    const states = new Map((await turnsOf(server.url, 'chain')).map((t) => [t.requestId, t.state]));
    expect(states.get('resp-2')).toBe('hit');
    const breaks = new Map((await breaksOf(server.url)).map((b) => [b.requestId, b]));
    expect(breaks.get('resp-3')).toMatchObject({ reason: 'likely_provider_ttl_or_eviction', reasons: ['likely_provider_ttl_or_eviction'], cause: 'ttl_expired', firstChangedMessageIndex: null });
    expect(breaks.get('resp-4')).toMatchObject({ reason: 'tools_schema_changed', reasons: ['tools_schema_changed'], changedToolNames: ['web_fetch'] });
    expect([...breaks.values()].flatMap((b) => b.reasons as string[])).not.toContain('messages_rewritten');
  });

  it('a continuesResponse that is not a boolean is refused, naming the field', async () => {
    const server = await startServer();
    const reply = await postEvents(server.url, [call(2, 0, 6_000, 0, { continuesResponse: 'yes' })]);
    expect(reply.body).toMatchObject({ accepted: 0, rejected: [{ index: 0 }] });
    expect(JSON.stringify(reply.body)).toContain('continuesResponse');
  });
});

describe('a Responses chain through the proxy', () => {
  const tool = (name: string) => ({ type: 'function', name, description: `The ${name} tool.`, parameters: { type: 'object', properties: { id: { type: 'string' } } } });

  /** A proxy to a mock Responses API that answers the n-th call of a session with the response `resp_<session>_<n>`. */
  async function chainProxy() {
    const usage: UsageFields = {};
    let id = '';
    const upstream = await mockUpstream((request) => responsesAnswer(request, usage, id));
    const server = await startServer({ command: 'proxy', args: ['--openai-upstream', upstream.url] });
    /** The n-th call of `session`: its whole input first, then only what is new after the previous response. */
    const send = async (session: string, n: number, input: number, cached: number, extra: Record<string, unknown> = {}) => {
      Object.assign(usage, { input_tokens: input, input_tokens_details: { cached_tokens: cached } });
      id = `resp_${session}_${n}`;
      const response = await fetch(`${server.proxyUrl}/openai/v1/responses`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'Bearer sk-test', 'x-cachebreak-session': session },
        body: JSON.stringify({
          model: 'gpt-4.1',
          instructions: 'You are a release assistant.',
          tools: ['get_release', 'list_issues'].map(tool),
          input: [{ role: 'user', content: [{ type: 'input_text', text: `Question ${n}` }] }],
          ...(n > 1 ? { previous_response_id: `resp_${session}_${n - 1}` } : {}),
          ...extra,
        }),
      });
      expect(response.status).toBe(200);
      await response.arrayBuffer();
    };
    return { upstream, server, send };
  }

  const sortedBreaks = async (url: string, count: number): Promise<WireBreak[]> =>
    (await waitFor(`${count} breaks`, () => breaksOf(url), (found) => found.length >= count)).sort((a, b) => String(a.ts).localeCompare(String(b.ts)));

  it('new input after previous_response_id: a hit, a miss with nothing changed (eviction), a new tool (tools_schema_changed); never messages_rewritten', async () => {
    const { upstream, server, send } = await chainProxy();
    try {
      await send('chain', 1, 6_000, 0);
      await send('chain', 2, 6_200, 5_888);
      await send('chain', 3, 6_400, 0);
      await send('chain', 4, 6_900, 0, { tools: ['get_release', 'list_issues', 'web_fetch'].map(tool) });
      const breaks = await sortedBreaks(server.url, 2);
      // One stream, whose baseline is each time the call before.
      const turns = await turnsOf(server.url, 'chain');
      expect(turns.map((t) => t.state)).toEqual(['cold', 'hit', 'miss', 'miss']);
      expect(new Set(turns.map((t) => t.agentId)).size).toBe(1);
      expect(breaks).toHaveLength(2);
      expect(breaks[0]).toMatchObject({ reason: 'likely_provider_ttl_or_eviction', reasons: ['likely_provider_ttl_or_eviction'], cause: 'likely_server_eviction', firstChangedMessageIndex: null });
      expect(breaks[1]).toMatchObject({ reason: 'tools_schema_changed', reasons: ['tools_schema_changed'], changedToolNames: ['web_fetch'] });
    } finally {
      await upstream.close();
    }
  });

  it('streamed, with the instructions edited mid-chain: the call goes on from its stream\'s response, and the break is system_changed', async () => {
    const { upstream, server, send } = await chainProxy();
    try {
      await send('edit', 1, 6_000, 0, { stream: true });
      await send('edit', 2, 6_200, 5_888, { stream: true });
      await send('edit', 3, 6_400, 0, { stream: true, instructions: 'You are a release assistant. Be terse.' });
      const breaks = await sortedBreaks(server.url, 1);
      expect(breaks).toHaveLength(1);
      expect(breaks[0]).toMatchObject({ reason: 'system_changed', reasons: ['system_changed'], changedSystemBlocks: [0] });
      const turns = await turnsOf(server.url, 'edit');
      expect(turns.map((t) => t.state)).toEqual(['cold', 'hit', 'miss']);
      expect(new Set(turns.map((t) => t.agentId)).size).toBe(1);
    } finally {
      await upstream.close();
    }
  });
});
