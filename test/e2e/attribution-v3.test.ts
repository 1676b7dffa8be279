// SPEC §4 v3 end to end, on the crafted cases of each rule: sent as a harness
// sends them through POST /v1/events to a real server, and as raw request
// bodies through a real `cachebreak proxy` to a mock Anthropic API, whose
// snapshots count the content blocks of each message. Both stores answer the
// same.
import { describe, expect, it } from 'vitest';
import { anthropicAnswer, mockUpstream } from '../proxy/upstreams.js';
import { waitFor } from '../proxy/wait.js';
import { breaksOf, turnsOf, type WireBreak, type WireTurn } from './api.js';
import { anthropicUsage, iso, opaqueHash, T0, toolRefs, type WireEvent } from './events.js';
import { postEvents, startServer } from './server.js';

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const TOOLS = toolRefs(['read_file', 'shell', 'grep']);
const SYSTEM = ['billing', 'You are a coding agent.'].map(opaqueHash);
const messages = (session: string, n: number, edit?: number) => Array.from({ length: n }, (_, i) => opaqueHash(`${session}/m${i}${i === edit ? '/edited' : ''}`));

/** A Claude request as one turn event with Anthropic's raw usage. */
function claude(id: string, session: string, at: number, read: number, write: number, extra: WireEvent = {}): WireEvent {
  return {
    type: 'turn',
    requestId: id,
    sessionId: session,
    ts: iso(T0 + at),
    endTs: iso(T0 + at + 4 * SECOND),
    provider: 'anthropic',
    model: 'claude-sonnet-4-5',
    systemBlockHashes: SYSTEM,
    tools: TOOLS,
    usage: anthropicUsage(read, write),
    ...extra,
  };
}

/** Cline's markers: on the last two user messages of `n`, both moving every turn. */
const lastTwoUsers = (session: string, n: number, ttl = '5m', edit?: number): WireEvent => ({
  messageHashes: messages(session, n, edit),
  cacheControl: { enabled: true, markers: [`system:1@${ttl}`, `messages:${n - 3}@${ttl}`, `messages:${n - 1}@${ttl}`] },
});

/** A Cline session: the baseline, then the turn `changed` describes. */
const cline = (session: string, at: number, ttl?: string, edit?: number) => [
  claude(`${session}-1`, session, 0, 0, 48_000, lastTwoUsers(session, 9)),
  claude(`${session}-2`, session, at, 0, 49_000, lastTwoUsers(session, 11, ttl, edit)),
];

/** OpenAI Responses usage with its write count: explicit caching (SPEC §4.12). */
const responsesUsage = (total: number, cached: number) => ({ input_tokens: total, output_tokens: 40, input_tokens_details: { cached_tokens: cached, cache_write_tokens: total - cached } });

function openai(id: string, session: string, at: number, model: string, usage: unknown, extra: WireEvent = {}): WireEvent {
  return { type: 'turn', requestId: id, sessionId: session, ts: iso(T0 + at), provider: 'openai', model, systemHash: opaqueHash('support'), tools: TOOLS, usage, ...extra };
}

/** A harness's snapshot and, apart, a gateway's usage whose clock runs three minutes ahead. */
function skewed(id: string, at: number, read: number, write: number, tools = TOOLS): WireEvent[] {
  const { usage, endTs: _end, type: _type, ...snapshot } = claude(id, 'skew', at, read, write, { tools });
  return [
    { ...snapshot, type: 'snapshot' },
    { type: 'usage', requestId: id, sessionId: 'skew', provider: 'anthropic', ts: T0 + at + 4 * SECOND + 3 * MINUTE, usage },
  ];
}

const EVENTS: WireEvent[] = [
  // Rule 1: markers moving, then the same after 7 minutes, with an edit, re-timed.
  ...cline('moved', MINUTE),
  ...cline('moved-late', 7 * MINUTE),
  ...cline('moved-edit', MINUTE, '5m', 2),
  ...cline('retimed', MINUTE, '1h'),
  // Rule 2: one step of 12 parallel tool calls after the marked message: 25 blocks in 2 messages.
  claude('bl1', 'blocks', 0, 0, 48_000, { messageHashes: messages('bl', 3), cacheControl: { enabled: true, markers: ['system:1', 'messages:2'] } }),
  claude('bl2', 'blocks', MINUTE, 0, 49_000, {
    messageHashes: messages('bl', 5),
    messageBlockCounts: [1, 1, 1, 13, 12],
    cacheControl: { enabled: true, markers: ['system:1', 'messages:4'] },
  }),
  // Rule 3: gpt-5.6 breakpoints 36 messages apart, 10 minutes idle; gpt-5.5 3 hours idle; Gemini 3 Pro below its minimum; a per-model minimum.
  openai('g56a', 'gpt56', 0, 'gpt-5.6', responsesUsage(40_000, 0), { messageHashes: messages('g56', 4), cacheControl: { enabled: true, markers: ['messages:3'] } }),
  openai('g56b', 'gpt56', 10 * MINUTE, 'gpt-5.6', responsesUsage(42_000, 0), { messageHashes: messages('g56', 40), cacheControl: { enabled: true, markers: ['messages:39'] } }),
  openai('g55a', 'gpt55', 0, 'gpt-5.5', responsesUsage(40_000, 0)),
  openai('g55b', 'gpt55', 3 * HOUR, 'gpt-5.5', responsesUsage(40_400, 0)),
  openai('ge3a', 'gemini3', 0, 'gemini-3-pro-preview', { promptTokenCount: 3_000, candidatesTokenCount: 20 }, { provider: 'gemini' }),
  openai('ge3b', 'gemini3', MINUTE, 'gemini-3-pro-preview', { promptTokenCount: 3_100, candidatesTokenCount: 20 }, { provider: 'gemini' }),
  openai('4oa', 'gpt4o', 0, 'gpt-4o-2024-08-06', { prompt_tokens: 3_000, completion_tokens: 20, prompt_tokens_details: { cached_tokens: 0 } }),
  openai('4ob', 'gpt4o', MINUTE, 'gpt-4o-2024-08-06', { prompt_tokens: 3_100, completion_tokens: 20, prompt_tokens_details: { cached_tokens: 0 } }),
  // Rule 6: the usage clock three minutes ahead; the tools change at the third request.
  ...skewed('sk1', 0, 0, 48_000),
  ...skewed('sk2', MINUTE, 48_000, 400),
  ...skewed('sk3', 2 * MINUTE, 0, 49_000, toolRefs(['read_file', 'shell', 'grep', 'web_fetch'])),
  // Rule 7: caching turned off after a 48,000-token write; the next request writes nothing and pays its prefix as input.
  claude('off1', 'off', 0, 0, 48_000, { messageHashes: messages('off', 3), cacheControl: { enabled: true, markers: ['messages:2'] } }),
  claude('off2', 'off', MINUTE, 0, 0, { messageHashes: messages('off', 5), cacheControl: { enabled: false }, usage: anthropicUsage(0, 0, 48_500) }),
  // Claude through OpenRouter, whose usage reports no write: the missed prefix was written again, not paid as input.
  openai('or1', 'openrouter', 0, 'anthropic/claude-sonnet-4.5', { prompt_tokens: 48_000, completion_tokens: 20, prompt_tokens_details: { cached_tokens: 0 } }, { provider: 'openrouter' }),
  openai('or2', 'openrouter', MINUTE, 'anthropic/claude-sonnet-4.5', { prompt_tokens: 48_400, completion_tokens: 20, prompt_tokens_details: { cached_tokens: 0 } }, { provider: 'openrouter' }),
  // LiteLLM's Anthropic usage: prompt_tokens without the cache, the write at the top level.
  openai('ll1', 'litellm', 0, 'claude-sonnet-4-5', { prompt_tokens: 120, completion_tokens: 20, cache_read_input_tokens: 48_000, cache_creation_input_tokens: 400 }),
];

const SESSIONS = ['moved', 'moved-late', 'moved-edit', 'retimed', 'blocks', 'gpt56', 'gpt55', 'gemini3', 'gpt4o', 'skew', 'off', 'openrouter', 'litellm'];

describe('attribution v3 against a real server', () => {
  it('names each rule\'s crafted case as the provider decides it, through POST /v1/events', async () => {
    const server = await startServer({ args: ['--min-cacheable', 'openai/gpt-4o*=4096'] });
    const reply = await postEvents(server.url, EVENTS);
    expect(reply.body).toEqual({ accepted: EVENTS.length, duplicates: 0, rejected: [] });
    const breaks = new Map((await breaksOf(server.url)).map((b) => [b.requestId, b]));
    const turns = new Map<string, WireTurn & { previousRequestId?: string | null; concurrentRequestIds?: string[] }>();
    for (const session of SESSIONS) for (const turn of await turnsOf(server.url, session)) turns.set(turn.requestId, turn);
    const b = (id: string) => breaks.get(id) as WireBreak;

    // Rule 1: moving markers is no change; a gap past the TTL and an edit outrank a re-timed marker.
    expect(b('moved-2')).toMatchObject({ reason: 'likely_provider_ttl_or_eviction', cause: 'likely_server_eviction' });
    expect(b('moved-late-2')).toMatchObject({ reason: 'likely_provider_ttl_or_eviction', cause: 'ttl_expired' });
    expect(b('moved-edit-2')).toMatchObject({ reason: 'messages_rewritten', firstChangedMessageIndex: 2 });
    expect(b('retimed-2')).toMatchObject({ reason: 'cache_control_changed', reasons: ['cache_control_changed'] });
    // Rule 2: counted in blocks.
    expect(b('bl2')).toMatchObject({ reason: 'breakpoint_lookback_exceeded' });
    // Rule 3: the table's rows.
    expect(b('g56b')).toMatchObject({ reason: 'likely_provider_ttl_or_eviction', cause: 'likely_server_eviction', ttlMs: 30 * MINUTE, ttlMaxMs: 24 * HOUR });
    expect(b('g55b')).toMatchObject({ cause: 'possible_ttl_expiry', ttlMaxMs: 24 * HOUR });
    expect([turns.get('ge3a')?.state, turns.get('ge3b')?.state]).toEqual(['uncached', 'uncached']);
    expect([turns.get('4oa')?.state, turns.get('4ob')?.state]).toEqual(['uncached', 'uncached']);
    expect(breaks.has('ge3b') || breaks.has('4ob')).toBe(false);
    // Rule 6: no request in flight for three minutes, and the break found against its real baseline.
    expect(turns.get('sk2')).toMatchObject({ state: 'hit', previousRequestId: 'sk1', concurrentRequestIds: [] });
    expect(turns.get('sk3')).toMatchObject({ state: 'miss', previousRequestId: 'sk2', concurrentRequestIds: [] });
    expect(b('sk3')).toMatchObject({ reason: 'tools_schema_changed', changedToolNames: ['web_fetch'], gapMs: MINUTE });
    // Rule 7: the missed 48,000 tokens were paid as input ($3 − $0.30 a MTok), not written again ($3.75 − $0.30: $0.1656).
    expect(b('off2')).toMatchObject({ reason: 'cache_control_changed', missedCacheReadTokens: 48_000, cacheWriteTokens: 0, estimatedExtraCostUsd: 0.1296 });
    // 48,000 written again at $3.75 instead of read at $0.30 a MTok (as input at $3: $0.1296).
    expect(b('or2')).toMatchObject({ missedCacheReadTokens: 48_000, estimatedExtraCostUsd: 0.1656 });
    // The 120 uncached tokens kept (they were lost: 0).
    expect(turns.get('ll1')?.usage).toMatchObject({ uncached: 120, read: 48_000, write: 400 });
  });

  it('refuses block counts that do not match the message hashes, naming the field, and stores the rest', async () => {
    const server = await startServer();
    const bad = claude('bad', 'bad', 0, 0, 48_000, { messageHashes: messages('bad', 3), messageBlockCounts: [1, 2] });
    const reply = await postEvents(server.url, [bad, claude('good', 'bad', MINUTE, 48_000, 100)]);
    expect(reply.body).toMatchObject({
      accepted: 1,
      rejected: [{ index: 0, field: 'messageBlockCounts', error: expect.stringContaining('expected one count per messageHashes entry (3), got 2') }],
    });
  });
});

/** An Anthropic request as Cline or Claude Code sends it: `messages` as built by the test. */
const body = (messages: unknown[], extra: Record<string, unknown> = {}) =>
  JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 1024, system: [{ type: 'text', text: 'You are a coding agent.', cache_control: { type: 'ephemeral' } }], messages, ...extra });
const text = (t: string, marked = false) => ({ type: 'text', text: t, ...(marked ? { cache_control: { type: 'ephemeral' } } : {}) });

/** A conversation of `n` messages, user first, the last two user messages marked (Cline). */
const clineMessages = (n: number) =>
  Array.from({ length: n }, (_, i) => ({ role: i % 2 === 0 ? 'user' : 'assistant', content: [text(`message ${i}`, i % 2 === 0 && i >= n - 3)] }));

/** The messages with a document before the first one's text, citations on or off. */
const withDocument = (messages: { role: string; content: unknown[] }[], citations: boolean) =>
  messages.map((message, i) => (i === 0 ? { ...message, content: [{ type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'the handbook' }, citations: { enabled: citations } }, ...message.content] } : message));

/**
 * A conversation with thinking on, its first `n` messages: a prompt, a tool
 * step that thinks first, its result, an answer, the second prompt.
 */
const thinkingMessages = (n: number) =>
  [
    { role: 'user', content: [text('question 0')] },
    { role: 'assistant', content: [{ type: 'thinking', thinking: 'plan', signature: 'sig' }, { type: 'tool_use', id: 'tu_0', name: 'read_file', input: { path: 'f' } }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'tu_0', content: 'ok', cache_control: { type: 'ephemeral' } }] },
    { role: 'assistant', content: [text('answer 0')] },
    { role: 'user', content: [text('question 1', true)] },
  ].slice(0, n);
const THINKING = { thinking: { type: 'enabled', budget_tokens: 4_000 } };

/** The opening prompt, then an assistant step calling `calls` tools at once and the user message with their results, the last block marked. */
function toolStep(calls: number): unknown[] {
  return [
    { role: 'user', content: [text('fix the tests', calls === 0)] },
    ...(calls === 0
      ? []
      : [
          { role: 'assistant', content: [text('reading'), ...Array.from({ length: calls }, (_, i) => ({ type: 'tool_use', id: `tu_${i}`, name: 'read_file', input: { path: `f${i}` } }))] },
          { role: 'user', content: Array.from({ length: calls }, (_, i) => ({ type: 'tool_result', tool_use_id: `tu_${i}`, content: 'ok', ...(i === calls - 1 ? { cache_control: { type: 'ephemeral' } } : {}) })) },
        ]),
  ];
}

describe('attribution v3 through the proxy', () => {
  it('reads markers, content blocks and cache-key fields from raw bodies: Cline\'s moving markers are no change, 12 parallel tool calls are past the lookback, a new effort and citations turned on are parameter changes, thinking Sonnet 4.5 strips is a rewrite', async () => {
    const usage: Record<string, number> = {};
    const upstream = await mockUpstream((request) => anthropicAnswer(request, usage, `req_${upstream.received.length}`));
    try {
      const server = await startServer({ command: 'proxy', args: ['--anthropic-upstream', upstream.url] });
      const call = async (session: string, messages: unknown[], read: number, write: number, extra: Record<string, unknown> = {}) => {
        Object.assign(usage, { input_tokens: 50, cache_read_input_tokens: read, cache_creation_input_tokens: write });
        const response = await fetch(`${server.proxyUrl}/anthropic/v1/messages`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-key': 'sk-ant-test', 'anthropic-version': '2023-06-01', 'x-cachebreak-session': session },
          body: body(messages, extra),
        });
        expect(response.status).toBe(200);
        await response.arrayBuffer();
      };
      await call('cline', clineMessages(9), 0, 48_000);
      await call('cline', clineMessages(11), 0, 49_000);
      await call('parallel', toolStep(0), 0, 48_000);
      await call('parallel', toolStep(12), 0, 49_000);
      await call('effort', clineMessages(3), 0, 48_000, { output_config: { effort: 'high' } });
      await call('effort', clineMessages(5), 0, 49_000, { output_config: { effort: 'low' } });
      await call('citations', withDocument(clineMessages(3), false), 0, 48_000);
      await call('citations', withDocument(clineMessages(5), true), 0, 49_000);
      await call('thinking', thinkingMessages(3), 0, 48_000, THINKING);
      await call('thinking', thinkingMessages(5), 0, 49_000, THINKING);
      await call('thinking-kept', thinkingMessages(3), 0, 48_000, { ...THINKING, model: 'claude-opus-4-5' });
      await call('thinking-kept', thinkingMessages(5), 0, 49_000, { ...THINKING, model: 'claude-opus-4-5' });
      const breaks = await waitFor(
        'the six breaks',
        () => breaksOf(server.url),
        (found) => found.length >= 6,
      );
      const bySession = new Map(breaks.map((b) => [b.sessionId, b]));
      expect(bySession.get('cline')).toMatchObject({ reason: 'likely_provider_ttl_or_eviction', reasons: ['likely_provider_ttl_or_eviction'] });
      expect(bySession.get('parallel')).toMatchObject({ reason: 'breakpoint_lookback_exceeded', reasons: ['breakpoint_lookback_exceeded'] });
      // The effort is part of what the API caches: a change of it, not an eviction.
      expect(bySession.get('effort')).toMatchObject({ reason: 'request_params_changed', changedParams: ['output_config'], cause: null });
      // Turning citations on changes the system prompt the API builds: a parameter change, not the message that carries the toggle.
      expect(bySession.get('citations')).toMatchObject({ reason: 'request_params_changed', changedParams: ['citations'], cause: null });
      // Sonnet 4.5 strips the tool step's thinking once the second prompt comes: the cached messages end before that step.
      expect(bySession.get('thinking')).toMatchObject({ reason: 'messages_rewritten', firstChangedMessageIndex: 1, cause: null });
      // Opus 4.5 keeps it: nothing in the prompt changed.
      expect(bySession.get('thinking-kept')).toMatchObject({ reason: 'likely_provider_ttl_or_eviction', firstChangedMessageIndex: null });
    } finally {
      await upstream.close();
    }
  });
});
