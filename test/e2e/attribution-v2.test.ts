// SPEC §4 v2 end to end: each new reason and cause, sent as a harness sends
// it, through POST /v1/events to a real server and, as native log records,
// through a real OpenTelemetry exporter — both stores answer the same.
import { describe, expect, it } from 'vitest';
import { emitLogs, logExporter, nativeRecord, startOtlpServer } from '../otlp/harness.js';
import { breaksOf, turnsOf, type WireBreak } from './api.js';
import { anthropicUsage, iso, opaqueHash, T0, toolRefs, type WireEvent } from './events.js';
import { postEvents, startServer } from './server.js';

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const TOOLS = toolRefs(['read_file', 'shell', 'grep']);
const SYSTEM = ['billing', 'You are a coding agent.'].map(opaqueHash);
const messages = (session: string, n: number, edit?: number) => Array.from({ length: n }, (_, i) => opaqueHash(`${session}/m${i}${i === edit ? '/edited' : ''}`));

interface Turn {
  id: string;
  at: number;
  session: string;
  agent?: string;
  model?: string;
  read: number;
  write: number;
  extra?: WireEvent;
}

/** A Claude Code request as one turn event with Anthropic's raw usage. */
function claude({ id, at, session, agent, model, read, write, extra }: Turn): WireEvent {
  return {
    type: 'turn',
    requestId: id,
    sessionId: session,
    ...(agent ? { agentId: agent } : {}),
    ts: iso(T0 + at),
    endTs: iso(T0 + at + 4 * SECOND),
    provider: 'anthropic',
    model: model ?? 'claude-sonnet-4-5',
    systemBlockHashes: SYSTEM,
    tools: TOOLS,
    cacheControl: { enabled: true, ttl: '5m', markers: ['system:1', 'messages:-1'] },
    usage: anthropicUsage(read, write),
    ...extra,
  };
}

/** An OpenAI chat request: no write field, so automatic caching. */
function openai(id: string, at: number, session: string, prompt: number, cached: number, provider = 'openai', model = 'gpt-4.1'): WireEvent {
  return {
    type: 'turn',
    requestId: id,
    sessionId: session,
    ts: iso(T0 + at),
    provider,
    model,
    systemHash: opaqueHash('support'),
    tools: TOOLS,
    usage: { prompt_tokens: prompt, completion_tokens: 80, prompt_tokens_details: { cached_tokens: cached } },
  };
}

const EVENTS: WireEvent[] = [
  // Extended thinking turned up between two turns.
  claude({ id: 'th1', at: 0, session: 'thinking', read: 0, write: 48_000, extra: { thinking: { type: 'enabled', budget_tokens: 8_000 } } }),
  claude({ id: 'th2', at: MINUTE, session: 'thinking', read: 9_000, write: 40_000, extra: { thinking: { type: 'enabled', budget_tokens: 32_000 } } }),
  // A marker more than 20 messages past the cached one.
  claude({ id: 'lb1', at: 0, session: 'lookback', read: 0, write: 48_000, extra: { messageHashes: messages('lb', 4), cacheControl: { enabled: true, markers: ['system:1', 'messages:3'] } } }),
  claude({ id: 'lb2', at: MINUTE, session: 'lookback', read: 9_000, write: 45_000, extra: { messageHashes: messages('lb', 30), cacheControl: { enabled: true, markers: ['system:1', 'messages:29'] } } }),
  // An edit after the last breakpoint: not the cause.
  claude({ id: 'af1', at: 0, session: 'after', read: 0, write: 48_000, extra: { messageHashes: messages('af', 6), cacheControl: { enabled: true, markers: ['system:1', 'messages:3'] } } }),
  claude({ id: 'af2', at: MINUTE, session: 'after', read: 0, write: 49_000, extra: { messageHashes: messages('af', 8, 5), cacheControl: { enabled: true, markers: ['system:1', 'messages:7'] } } }),
  // The TTL of a raw tool definition's marker flips to 1h.
  claude({ id: 'tt1', at: 0, session: 'tool-ttl', read: 0, write: 48_000, extra: { tools: undefined, toolDefinitions: [{ name: 'read_file', input_schema: {}, cache_control: { type: 'ephemeral' } }] } }),
  claude({ id: 'tt2', at: MINUTE, session: 'tool-ttl', read: 0, write: 48_000, extra: { tools: undefined, toolDefinitions: [{ name: 'read_file', input_schema: {}, cache_control: { type: 'ephemeral', ttl: '1h' } }] } }),
  // Two requests in flight at once, then one that reads what the first left.
  claude({ id: 'pa1', at: 0, session: 'parallel', read: 0, write: 48_000, extra: { ttftMs: 3_000 } }),
  claude({ id: 'pa2', at: SECOND, session: 'parallel', read: 0, write: 48_000 }),
  claude({ id: 'pa3', at: 10 * SECOND, session: 'parallel', read: 48_000, write: 200 }),
  // Two ids of one model family, and a model the price database does not know.
  claude({ id: 'fa1', at: 0, session: 'family', read: 0, write: 48_000 }),
  claude({ id: 'fa2', at: MINUTE, session: 'family', model: 'claude-sonnet-4-5-20250929', read: 0, write: 48_500 }),
  claude({ id: 'un1', at: 0, session: 'unpriced', model: 'acme-coder-1', read: 0, write: 48_000 }),
  claude({ id: 'un2', at: MINUTE, session: 'unpriced', model: 'acme-coder-1', read: 0, write: 48_500 }),
  // Automatic caching: the whole prompt was cached; 30 min later it is a possible expiry.
  openai('oa1', 0, 'openai', 30_000, 0),
  openai('oa2', 30 * MINUTE, 'openai', 30_400, 0),
  // Gemini's implicit cache: retention unknown, so no cause.
  openai('ge1', 0, 'gemini', 30_000, 0, 'gemini', 'gemini-2.5-flash'),
  openai('ge2', 2 * MINUTE, 'gemini', 30_400, 0, 'gemini', 'gemini-2.5-flash'),
  // 5m and 1h tiers: 10 minutes idle expires only the 5m tier.
  claude({ id: 'ti1', at: 0, session: 'tiers', read: 0, write: 48_000, extra: { cacheControl: { enabled: true, markers: ['system:1@1h', 'messages:-1@5m'] } } }),
  claude({ id: 'ti2', at: 10 * MINUTE, session: 'tiers', read: 20_000, write: 29_000, extra: { cacheControl: { enabled: true, markers: ['system:1@1h', 'messages:-1@5m'] } } }),
  // A compaction request in its own stream makes the next main turn expected.
  claude({ id: 'co1', at: 0, session: 'compaction', read: 0, write: 90_000, extra: { messageHashes: messages('co', 40) } }),
  claude({ id: 'co2', at: MINUTE, session: 'compaction', agent: 'compact', read: 90_000, write: 3_000, extra: { messageHashes: messages('co', 41) } }),
  claude({ id: 'co3', at: 2 * MINUTE, session: 'compaction', read: 9_000, write: 6_000, extra: { messageHashes: [opaqueHash('summary')] } }),
  // Normalised counts need no provider (SPEC §2).
  { type: 'usage', requestId: 'np1', sessionId: 'no-provider', ts: T0, uncachedInputTokens: 10, cacheReadInputTokens: 500, outputTokens: 3 },
];

const SESSIONS = ['thinking', 'lookback', 'after', 'tool-ttl', 'parallel', 'family', 'unpriced', 'openai', 'gemini', 'tiers', 'compaction', 'no-provider'];

async function stored(url: string) {
  const breaks = new Map((await breaksOf(url)).map((b) => [b.requestId, b]));
  const turns = new Map<string, Awaited<ReturnType<typeof turnsOf>>[number] & { previousRequestId?: string | null; concurrentRequestIds?: string[] }>();
  for (const session of SESSIONS) for (const turn of await turnsOf(url, session)) turns.set(turn.requestId, turn);
  return { breaks, turns };
}

describe('attribution v2 against a real server', () => {
  it('names every new reason and cause, through POST /v1/events and through OTLP alike', async () => {
    const http = await startServer();
    const reply = await postEvents(http.url, EVENTS);
    expect(reply.body).toEqual({ accepted: EVENTS.length, duplicates: 0, rejected: [] });
    const { breaks, turns } = await stored(http.url);
    const b = (id: string) => breaks.get(id) as WireBreak;

    expect(b('th2')).toMatchObject({ reason: 'request_params_changed', changedParams: ['thinking'], cause: null });
    expect(b('lb2')).toMatchObject({ reason: 'breakpoint_lookback_exceeded' });
    expect(b('af2')).toMatchObject({ reason: 'likely_provider_ttl_or_eviction', changesAfterCachedPrefix: ['messages_rewritten'], firstChangedMessageIndex: 5, cause: 'likely_server_eviction' });
    expect(b('tt2')).toMatchObject({ reason: 'cache_control_changed', changedToolNames: [] });
    expect(breaks.has('pa2')).toBe(false);
    expect(turns.get('pa2')).toMatchObject({ state: 'cold', previousRequestId: null, concurrentRequestIds: ['pa1'] });
    expect(turns.get('pa3')).toMatchObject({ state: 'hit', previousRequestId: 'pa2' });
    expect(b('fa2')).toMatchObject({ reason: 'likely_provider_ttl_or_eviction', reasons: ['likely_provider_ttl_or_eviction'] });
    expect(b('un2')).toMatchObject({ estimatedExtraCostUsd: null });
    expect(b('oa2')).toMatchObject({ cause: 'possible_ttl_expiry', expectedCacheReadTokens: 30_000, ttlMs: 5 * MINUTE, ttlMaxMs: 60 * MINUTE });
    expect(b('ge2')).toMatchObject({ cause: null, ttlMs: null, ttlMaxMs: null, ttlSource: 'unknown' });
    expect(b('ti2')).toMatchObject({ cause: 'ttl_expired', partialExpiry: true, ttlMs: 5 * MINUTE, ttlMaxMs: 60 * MINUTE, ttlSource: 'declared' });
    expect(turns.get('co3')).toMatchObject({ state: 'expected' });
    expect(breaks.has('co3')).toBe(false);
    expect(turns.get('np1')).toMatchObject({ state: 'hit', provider: null });

    // The same events as native log records, through a real OTLP/HTTP exporter.
    const otlp = await startOtlpServer();
    expect(await emitLogs(logExporter(otlp, 'http/protobuf'), EVENTS.map(nativeRecord))).toEqual([{ code: 0 }]);
    expect(await stored(otlp.url)).toEqual({ breaks, turns });
    await http.stop();
  });
});
