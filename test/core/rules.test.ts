// SPEC §4 version 2, rule by rule: each test names the rule it proves.
import { describe, expect, it } from 'vitest';
import { modelFamily } from '../../src/core/family.js';
import { hashString } from '../../src/core/hash.js';
import { buildSnapshot } from '../../src/core/snapshot/index.js';
import { normalizeUsage } from '../../src/core/usage.js';
import type { CacheEvent, TurnEvent, Usage } from '../../src/core/types.js';
import { loadRequest } from './request-fixtures.js';
import { evaluate, MINUTE, SECOND, T0, TEST_OPTIONS, turn, usage } from './scenario.js';

const HOUR = 60 * MINUTE;
const WARM = usage(48_900, 400);
const messages = (n: number, edit?: number) => Array.from({ length: n }, (_, i) => hashString(`m${i}${i === edit ? '*' : ''}`));

/** An OpenAI chat turn: usage with no write field, so automatic caching. */
function openai(requestId: string, at: number, prompt: number, cached: number, extra: Partial<TurnEvent> = {}): TurnEvent {
  const result = normalizeUsage('openai', { prompt_tokens: prompt, completion_tokens: 50, prompt_tokens_details: { cached_tokens: cached } });
  if (!result.ok) throw new Error(result.error);
  return turn(requestId, { at, provider: 'openai', model: 'gpt-4o', cacheControl: { enabled: true, scope: 'auto' }, usage: result.usage, ...extra });
}

const automatic = (read: number, total: number): Usage => ({ ...usage(read, 0, total - read), writeReported: false });

describe('§4.1 turn states', () => {
  it('a first turn that reads a prefix another stream wrote is a hit, not cold', () => {
    expect(evaluate([turn('r1', { usage: WARM })]).get('r1')!.state).toBe('hit');
  });

  it('automatic caching: a prompt below the minimum is uncached, one above it that read nothing is cold', () => {
    const result = evaluate([
      turn('small', { provider: 'openai', model: 'gpt-4o', usage: automatic(0, 900) }),
      turn('large', { agentId: 'other', provider: 'openai', model: 'gpt-4o', usage: automatic(0, 5_000) }),
    ]);
    expect(result.get('small')!.state).toBe('uncached');
    expect(result.get('large')!.state).toBe('cold');
  });

  it('automatic caching: a turn below the minimum cannot read, so it is never a miss', () => {
    const options = { ...TEST_OPTIONS, minMissTokens: 100 };
    const result = evaluate(
      [
        turn('r1', { provider: 'openai', model: 'gpt-4o', usage: automatic(0, 5_000) }),
        turn('r2', { at: MINUTE, provider: 'openai', model: 'gpt-4o', usage: automatic(0, 800) }),
      ],
      options,
    );
    expect(result.get('r2')!.state).toBe('uncached');
  });
});

describe('§4.2 baseline', () => {
  it('model ids compare by family: a date suffix, a region or vendor prefix and -v1:0 are one family; gpt-4o-mini is not gpt-4o', () => {
    for (const id of ['claude-sonnet-4-5-20250929', 'us.anthropic.claude-sonnet-4-5-20250929-v1:0', 'anthropic/claude-sonnet-4-5', 'CLAUDE-SONNET-4-5@20250929']) {
      expect(modelFamily(id), id).toBe('claude-sonnet-4-5');
    }
    expect(modelFamily('gpt-4o-2024-08-06')).toBe('gpt-4o');
    expect(modelFamily('gpt-4o-mini')).toBe('gpt-4o-mini');
    expect(modelFamily('models/gemini-2.5-pro')).toBe('gemini-2.5-pro');
    expect(modelFamily('projects/p/locations/l/publishers/google/models/gemini-2.5-flash')).toBe('gemini-2.5-flash');
    expect(modelFamily('claude-3-5-haiku-latest')).toBe('claude-3-5-haiku');
    // A version that is part of the name stays.
    expect(modelFamily('deepseek-v3')).toBe('deepseek-v3');
  });

  it('one family under two ids is no model change', () => {
    const result = evaluate([
      turn('r1', { usage: WARM }),
      turn('r2', { at: MINUTE, model: 'claude-sonnet-4-5-20250929', usage: usage(0, 49_300) }),
    ]);
    expect(result.get('r2')!.break).toMatchObject({ reason: 'likely_provider_ttl_or_eviction', reasons: ['likely_provider_ttl_or_eviction'] });
  });

  it('alternating models: each turn is compared with the latest turn of its own family', () => {
    const result = evaluate([
      turn('a1', { usage: WARM }),
      turn('b1', { at: 10 * SECOND, model: 'claude-haiku-4-5', usage: usage(0, 12_000) }),
      turn('a2', { at: 20 * SECOND, usage: usage(49_000, 300) }),
      turn('b2', { at: 30 * SECOND, model: 'claude-haiku-4-5', usage: usage(12_000, 100) }),
    ]);
    expect(result.get('a2')).toMatchObject({ state: 'hit', previousRequestId: 'a1' });
    expect(result.get('b2')).toMatchObject({ state: 'hit', previousRequestId: 'b1' });
    // With no turn of its own family before it, b1 is compared with any model: a break by model_changed.
    expect(result.get('b1')!.break).toMatchObject({ reason: 'model_changed', previousRequestId: 'a1' });
  });

  it('an unreported turn is never a baseline', () => {
    const result = evaluate([
      turn('r1', { usage: WARM }),
      turn('r2', { at: 10 * SECOND, usage: { ...usage(0, 0, 49_000), cacheReported: false } }),
      turn('r3', { at: 20 * SECOND, usage: usage(49_000, 300) }),
    ]);
    expect(result.get('r3')).toMatchObject({ state: 'hit', previousRequestId: 'r1' });
  });

  it('parallel requests: a turn that started before the other answered is concurrent, not a baseline, and no break', () => {
    const result = evaluate([
      turn('lead', { ttftMs: 3 * SECOND, usage: usage(0, 48_900) }),
      turn('side', { at: 1 * SECOND, usage: usage(0, 48_900) }),
      turn('next', { at: 5 * SECOND, usage: usage(48_900, 200) }),
    ]);
    expect(result.get('side')).toMatchObject({ state: 'cold', previousRequestId: null, concurrentRequestIds: ['lead'] });
    expect(result.get('next')).toMatchObject({ state: 'hit', previousRequestId: 'side', concurrentRequestIds: [] });
  });

  it('availability: time to first token first, else the response end (at most 10 s after the start), else only the start', () => {
    const write = usage(0, 48_900);
    // Known ttft: readable 2 s after its start, although its response ends 60 s in.
    const byTtft = evaluate([turn('b', { ttftMs: 2 * SECOND, endTs: T0 + MINUTE, usage: write }), turn('c', { at: 10 * SECOND, usage: usage(0, 48_900) })]);
    expect(byTtft.get('c')).toMatchObject({ previousRequestId: 'b', state: 'miss' });
    // No ttft: readable when its response ended, 4 s in.
    const byEnd = evaluate([turn('b', { endTs: T0 + 4 * SECOND, usage: write }), turn('c', { at: 3 * SECOND, usage: usage(0, 48_900) })]);
    expect(byEnd.get('c')).toMatchObject({ previousRequestId: null, concurrentRequestIds: ['b'], state: 'cold' });
    // A response end 60 s in holds it in flight for 10 s only: its first token came long before.
    const longAnswer = (at: number) => evaluate([turn('b', { endTs: T0 + MINUTE, usage: write }), turn('c', { at, usage: usage(0, 48_900) })]).get('c');
    expect(longAnswer(9 * SECOND)).toMatchObject({ previousRequestId: null, concurrentRequestIds: ['b'] });
    expect(longAnswer(10 * SECOND)).toMatchObject({ previousRequestId: 'b', concurrentRequestIds: [], state: 'miss' });
    // Neither: readable by any turn that started later.
    const { endTs: _end, ...bare } = turn('b', { usage: write });
    const byStart = evaluate([bare, turn('c', { at: 1, usage: usage(0, 48_900) })]);
    expect(byStart.get('c')).toMatchObject({ previousRequestId: 'b', state: 'miss' });
  });
});

describe('§4.3 break criterion with automatic caching', () => {
  it('the OpenAI timestamp bug: a date in the system prompt breaks every turn, and each break is found', () => {
    const system = (minute: number) => ({ systemBlockHashes: [hashString(`You are helpful. It is 10:0${minute}.`)] });
    const result = evaluate([
      openai('o1', 0, 20_000, 0, system(0)),
      openai('o2', MINUTE, 20_400, 0, system(1)),
      openai('o3', 2 * MINUTE, 20_800, 0, system(2)),
    ]);
    expect([...result.values()].map((e) => e.state)).toEqual(['cold', 'miss', 'miss']);
    expect(result.get('o2')!.break).toMatchObject({
      reason: 'system_changed',
      changedSystemBlocks: [0],
      // The whole previous prompt was cached: nothing reported as written.
      expectedCacheReadTokens: 20_000,
      missedCacheReadTokens: 20_000,
      cacheWriteTokens: 0,
    });
    // Missed tokens paid as input instead of a read: 20,000 × ($2.50 − $1.25) per MTok.
    expect(result.get('o2')!.break!.estimatedExtraCostUsd).toBeCloseTo(0.025, 9);
  });

  it('LiteLLM usage with a top-level cache_creation_input_tokens is explicit caching: its writes count', () => {
    const result = normalizeUsage('openai', {
      prompt_tokens: 50_000,
      completion_tokens: 10,
      prompt_tokens_details: { cached_tokens: 0 },
      cache_creation_input_tokens: 48_000,
      cache_read_input_tokens: 0,
    });
    expect(result).toMatchObject({ ok: true, usage: { uncached: 2_000, read: 0, write: 48_000, writeReported: true } });
    const explicit = (result as { usage: Usage }).usage;
    const evaluated = evaluate([
      turn('l1', { provider: 'openai', usage: explicit }),
      turn('l2', { at: MINUTE, provider: 'openai', usage: usage(0, 48_000, 2_100) }),
    ]);
    expect(evaluated.get('l2')!.break).toMatchObject({ expectedCacheReadTokens: 48_000 });
  });

  it('LiteLLM usage whose prompt_tokens leave the cache out (Anthropic\'s input_tokens) keeps its uncached tokens', () => {
    // The top-level shape: 120 uncached beside a 48,000 read and a 400 write.
    expect(normalizeUsage('openai', { prompt_tokens: 120, completion_tokens: 10, cache_read_input_tokens: 48_000, cache_creation_input_tokens: 400 })).toMatchObject({
      ok: true,
      usage: { uncached: 120, read: 48_000, write: 400, writeReported: true },
    });
    // The details shape (cache_creation_tokens).
    expect(normalizeUsage('openai', { prompt_tokens: 12, completion_tokens: 10, prompt_tokens_details: { cached_tokens: 2_495, cache_creation_tokens: 300 } })).toMatchObject({
      ok: true,
      usage: { uncached: 12, read: 2_495, write: 300, writeReported: true },
    });
    // A total that can hold what was read and written includes it, as OpenAI's does.
    expect(normalizeUsage('openai', { prompt_tokens: 50_000, completion_tokens: 10, prompt_tokens_details: { cached_tokens: 48_000, cache_creation_tokens: 400 } })).toMatchObject({
      ok: true,
      usage: { uncached: 1_600, read: 48_000, write: 400 },
    });
  });

  it('a DashScope explicit-cache hit names its cache_type: explicit caching although no write is reported', () => {
    const result = normalizeUsage('dashscope', { prompt_tokens: 3_032, completion_tokens: 8, prompt_tokens_details: { cached_tokens: 1_013, cache_type: 'ephemeral' } });
    expect(result).toMatchObject({ ok: true, usage: { read: 1_013, write: 0, writeReported: true } });
  });

  it('minimums by provider and model, overridable in the options', () => {
    const at = (provider: string, model: string, total: number, minCacheable = {}) =>
      evaluate([turn('r', { provider, model, usage: automatic(0, total) })], { ...TEST_OPTIONS, minCacheable }).get('r')!.state;
    expect(at('gemini', 'gemini-2.5-pro', 1_500)).toBe('uncached');
    expect(at('gemini', 'gemini-2.5-flash', 1_500)).toBe('cold');
    expect(at('deepseek', 'deepseek-chat', 100)).toBe('cold');
    expect(at('openai', 'gpt-4o', 1_500, { openai: 2_000 })).toBe('uncached');
    // An unknown provider without a write field caches automatically, from 1,024 tokens.
    expect(at('acme', 'acme-1', 1_000)).toBe('uncached');
    expect(at('acme', 'acme-1', 1_100)).toBe('cold');
  });
});

describe('§4.4 attribution: only changes inside the cached prefix explain a miss', () => {
  const marked = (n: number, marker: number) => ({
    messageHashes: messages(n),
    cacheControl: { enabled: true, ttl: '5m', markers: ['system:1', `messages:${marker}`] },
  });

  it('an edit after the baseline\'s last breakpoint is listed apart, not named as the cause', () => {
    const result = evaluate([
      turn('r1', { ...marked(6, 3), usage: WARM }),
      turn('r2', { at: MINUTE, ...marked(8, 7), messageHashes: messages(8, 5), usage: usage(0, 49_300) }),
    ]);
    expect(result.get('r2')!.break).toMatchObject({
      reason: 'likely_provider_ttl_or_eviction',
      changesAfterCachedPrefix: ['messages_rewritten'],
      firstChangedMessageIndex: 5,
      cause: 'likely_server_eviction',
    });
  });

  it('an edit inside it is the reason', () => {
    const result = evaluate([
      turn('r1', { ...marked(6, 3), usage: WARM }),
      turn('r2', { at: MINUTE, ...marked(8, 7), messageHashes: messages(8, 2), usage: usage(0, 49_300) }),
    ]);
    expect(result.get('r2')!.break).toMatchObject({ reason: 'messages_rewritten', firstChangedMessageIndex: 2, changesAfterCachedPrefix: [], cause: null });
  });

  it('without markers the cached prefix is the whole previous prompt', () => {
    const result = evaluate([
      openai('o1', 0, 20_000, 0, { messageHashes: messages(4) }),
      openai('o2', MINUTE, 20_400, 0, { messageHashes: messages(6, 3) }),
    ]);
    expect(result.get('o2')!.break).toMatchObject({ reason: 'messages_rewritten', firstChangedMessageIndex: 3 });
  });

  it('request_params_changed: a thinking budget, tool_choice or another parameter, named in changedParams', () => {
    const result = evaluate([
      turn('r1', { thinking: { type: 'enabled', budget_tokens: 8_000 }, toolChoice: { type: 'auto' }, params: { speed: 'fast' }, usage: WARM }),
      turn('r2', { at: MINUTE, thinking: { type: 'enabled', budget_tokens: 16_000 }, toolChoice: { type: 'any' }, params: {}, usage: usage(0, 49_300) }),
    ]);
    expect(result.get('r2')!.break).toMatchObject({
      reason: 'request_params_changed',
      changedParams: ['speed', 'thinking', 'toolChoice'],
      cause: null,
    });
  });

  it('a request body that turns thinking on is request_params_changed (raw Anthropic bodies)', () => {
    const body = loadRequest('claude-code');
    const before = buildSnapshot(body, 'anthropic');
    const after = buildSnapshot({ ...body, thinking: { type: 'enabled', budget_tokens: 4_000 } }, 'anthropic');
    if (!before.ok || !after.ok) throw new Error('fixture did not build');
    const result = evaluate([
      turn('r1', { ...before.snapshot, usage: WARM }),
      turn('r2', { ...after.snapshot, at: MINUTE, usage: usage(0, 49_300) }),
    ]);
    expect(result.get('r2')!.break).toMatchObject({ reason: 'request_params_changed', changedParams: ['thinking'] });
  });

  it('cache-key fields of a raw Anthropic body — effort, context editing, remote MCP servers — are request_params_changed, not an eviction', () => {
    const body = loadRequest('claude-code');
    const variants = [
      { ...body, output_config: { effort: 'high' } },
      { ...body, output_config: { effort: 'low' } },
      { ...body, output_config: { effort: 'low' }, context_management: { edits: [{ type: 'clear_tool_uses_20250919' }] } },
      { ...body, output_config: { effort: 'low' }, context_management: { edits: [{ type: 'clear_tool_uses_20250919' }] }, mcp_servers: [{ type: 'url', url: 'https://mcp.example.com/sse', name: 'docs' }] },
    ].map((variant) => {
      const built = buildSnapshot(variant, 'anthropic');
      if (!built.ok) throw new Error('fixture did not build');
      return built.snapshot;
    });
    const result = evaluate(variants.map((snapshot, i) => turn(`p${i}`, { ...snapshot, at: i * MINUTE, usage: i === 0 ? WARM : usage(0, 49_300) })));
    expect([1, 2, 3].map((i) => result.get(`p${i}`)!.break)).toMatchObject([
      { reason: 'request_params_changed', changedParams: ['output_config'], cause: null },
      { reason: 'request_params_changed', changedParams: ['context_management'], cause: null },
      { reason: 'request_params_changed', changedParams: ['mcp_servers'], cause: null },
    ]);
  });

  it('a citations toggle on a document of a raw Anthropic body is request_params_changed naming citations, before the edited message, never an eviction', () => {
    const document = (enabled: boolean | undefined) => ({
      type: 'document',
      source: { type: 'text', media_type: 'text/plain', data: 'the handbook' },
      ...(enabled === undefined ? {} : { citations: { enabled } }),
    });
    const request = (enabled: boolean | undefined) => {
      const built = buildSnapshot(
        {
          model: 'claude-sonnet-4-5',
          max_tokens: 1024,
          system: [{ type: 'text', text: 'You answer from the handbook.', cache_control: { type: 'ephemeral' } }],
          messages: [
            { role: 'user', content: [document(enabled), { type: 'text', text: 'what is the leave policy?' }] },
            { role: 'assistant', content: [{ type: 'text', text: 'twenty days' }] },
            { role: 'user', content: [{ type: 'text', text: 'and sick leave?', cache_control: { type: 'ephemeral' } }] },
          ],
        },
        'anthropic',
      );
      if (!built.ok) throw new Error(built.error);
      return built.snapshot;
    };
    // Off (absent), on, on again (a hit), then explicitly off.
    const snapshots = [request(undefined), request(true), request(true), request(false)];
    expect(snapshots.map((s) => s.params)).toEqual([{}, { citations: true }, { citations: true }, {}]);
    const result = evaluate(snapshots.map((snapshot, i) => turn(`c${i}`, { ...snapshot, at: i * MINUTE, usage: i === 0 || i === 2 ? WARM : usage(0, 49_300) })));
    expect(result.get('c1')!.break).toMatchObject({ reason: 'request_params_changed', changedParams: ['citations'], cause: null });
    expect(result.get('c2')!.break).toBeNull();
    expect(result.get('c3')!.break).toMatchObject({ reason: 'request_params_changed', changedParams: ['citations'], cause: null });
  });

  it('breakpoint_lookback_exceeded: the new breakpoint is more than 20 entries past the cached one', () => {
    const result = evaluate([
      turn('r1', { ...marked(4, 3), usage: WARM }),
      turn('r2', { at: MINUTE, ...marked(30, 29), usage: usage(0, 52_000) }),
      turn('r3', { at: 2 * MINUTE, ...marked(40, 39), usage: usage(0, 60_000) }),
    ]);
    expect(result.get('r2')!.break).toMatchObject({ reason: 'breakpoint_lookback_exceeded', reasons: ['breakpoint_lookback_exceeded'] });
    // Within 20 entries the lookup reaches the cached entry: nothing to blame but the provider.
    expect(result.get('r3')!.break).toMatchObject({ reason: 'likely_provider_ttl_or_eviction' });
  });

  it('every change inside the prefix is listed in prefix order; tools_order_changed also beside a schema change', () => {
    const result = evaluate([
      turn('r1', { tools: [{ name: 'a', schemaHash: '1' }, { name: 'b', schemaHash: '1' }], usage: WARM }),
      turn('r2', {
        at: MINUTE,
        model: 'claude-opus-4-5',
        systemBlockHashes: [hashString('billing'), hashString('changed')],
        tools: [{ name: 'b', schemaHash: '2' }, { name: 'a', schemaHash: '1' }],
        usage: usage(0, 49_300),
      }),
    ]);
    expect(result.get('r2')!.break).toMatchObject({
      reason: 'model_changed',
      reasons: ['model_changed', 'tools_schema_changed', 'tools_order_changed', 'system_changed'],
      changedSystemBlocks: [1],
      changedToolNames: ['a', 'b'],
    });
  });
});

describe('§4.5 cause: TTL or eviction', () => {
  const tiered = { enabled: true, markers: ['system:1@1h', 'messages:-1@5m'] };

  it('the gap runs from the baseline\'s start plus its time to first token, not from its response end', () => {
    const result = evaluate([
      turn('r1', { ttftMs: 2 * SECOND, endTs: T0 + 5 * MINUTE, usage: WARM }),
      turn('r2', { at: 6 * MINUTE, usage: usage(0, 49_300) }),
    ]);
    expect(result.get('r2')!.break).toMatchObject({ gapMs: 6 * MINUTE - 2 * SECOND, cause: 'ttl_expired', ttlMs: 5 * MINUTE });
  });

  it('explicit tiers: past the 5m tier but within the 1h one is a partial expiry; past 1h, a full one', () => {
    const result = evaluate([
      turn('r1', { cacheControl: tiered, usage: WARM }),
      turn('r2', { at: 10 * MINUTE, cacheControl: tiered, usage: usage(20_000, 29_300) }),
      turn('r3', { at: 75 * MINUTE, cacheControl: tiered, usage: usage(0, 49_300) }),
    ]);
    expect(result.get('r2')!.break).toMatchObject({
      cause: 'ttl_expired',
      partialExpiry: true,
      ttlMs: 5 * MINUTE,
      ttlMaxMs: HOUR,
      ttlSource: 'declared',
    });
    expect(result.get('r3')!.break).toMatchObject({ cause: 'ttl_expired', partialExpiry: false });
  });

  it('a baseline that only read takes its tiers from the latest turn that wrote', () => {
    const plain = { enabled: true };
    const result = evaluate([
      turn('w', { cacheControl: plain, usage: usage(0, 48_900, 120, 48_900) }),
      turn('r', { at: MINUTE, cacheControl: plain, usage: usage(48_900, 0) }),
      turn('c', { at: 40 * MINUTE, cacheControl: plain, usage: usage(0, 49_000) }),
    ]);
    expect(result.get('c')!.break).toMatchObject({ previousRequestId: 'r', ttlMs: 5 * MINUTE, ttlMaxMs: HOUR, ttlSource: 'previous_1h_write', partialExpiry: true });
  });

  it('automatic caching, OpenAI: within 5 min eviction, 5 min to 1 h possible expiry, past 1 h expired', () => {
    const causeAfter = (gap: number) => evaluate([openai('o1', 0, 20_000, 0), openai('o2', gap, 20_400, 0)]).get('o2')!.break!;
    expect(causeAfter(2 * MINUTE)).toMatchObject({ cause: 'likely_server_eviction', ttlMs: 5 * MINUTE, ttlMaxMs: HOUR, ttlSource: 'provider_default' });
    expect(causeAfter(30 * MINUTE)).toMatchObject({ cause: 'possible_ttl_expiry', partialExpiry: false });
    expect(causeAfter(2 * HOUR)).toMatchObject({ cause: 'ttl_expired' });
  });

  it('automatic caching: 24 h retention asked for, a 30-minute floor on gpt-5.6, DeepSeek without an upper bound, Gemini unknown', () => {
    const retention = { enabled: true, scope: 'auto', ttl: '24h' };
    const asked = evaluate([openai('o1', 0, 20_000, 0, { cacheControl: retention }), openai('o2', 3 * HOUR, 20_400, 0, { cacheControl: retention })]).get('o2')!.break!;
    expect(asked).toMatchObject({ cause: 'possible_ttl_expiry', ttlMs: 5 * MINUTE, ttlMaxMs: 24 * HOUR, ttlSource: 'declared' });
    const gpt56 = evaluate([openai('o1', 0, 20_000, 0, { model: 'gpt-5.6' }), openai('o2', 20 * MINUTE, 20_400, 0, { model: 'gpt-5.6' })]).get('o2')!.break!;
    expect(gpt56).toMatchObject({ cause: 'likely_server_eviction', ttlMs: 30 * MINUTE });
    const deepseek = (id: string, at: number) => turn(id, { at, provider: 'deepseek', model: 'deepseek-chat', usage: automatic(0, 30_000) });
    expect(evaluate([deepseek('d1', 0), deepseek('d2', 30 * HOUR)]).get('d2')!.break).toMatchObject({
      cause: 'possible_ttl_expiry',
      ttlMs: HOUR,
      ttlMaxMs: null,
    });
    const gemini = (id: string, at: number) => turn(id, { at, provider: 'gemini', model: 'gemini-2.5-flash', usage: automatic(0, 30_000) });
    expect(evaluate([gemini('g1', 0), gemini('g2', 10 * MINUTE)]).get('g2')!.break).toMatchObject({
      reason: 'likely_provider_ttl_or_eviction',
      cause: null,
      ttlMs: null,
      ttlMaxMs: null,
      ttlSource: 'unknown',
    });
  });

  it('unknown (incomplete snapshots): a cause only when the gap alone says expiry, never eviction', () => {
    const usageOnly = (id: string, at: number, u: Usage): CacheEvent => ({ type: 'usage', requestId: id, sessionId: 'sess_A', ts: T0 + at, provider: 'anthropic', usage: u });
    const soon = evaluate([usageOnly('u1', 0, WARM), usageOnly('u2', MINUTE, usage(0, 49_000))]).get('u2')!.break!;
    expect(soon).toMatchObject({ reason: 'unknown', cause: null });
    const late = evaluate([usageOnly('u1', 0, WARM), usageOnly('u2', 10 * MINUTE, usage(0, 49_000))]).get('u2')!.break!;
    expect(late).toMatchObject({ reason: 'unknown', cause: 'ttl_expired' });
  });

  it('a turn known only from its usage is placed at its response end: readable then, refreshed then', () => {
    const usageOnly = (id: string, at: number, u: Usage): CacheEvent => ({ type: 'usage', requestId: id, sessionId: 'sess_A', ts: T0 + at, ttftMs: 3 * SECOND, provider: 'anthropic', usage: u });
    const result = evaluate([usageOnly('u1', 0, WARM), usageOnly('u2', 6 * MINUTE, usage(0, 49_000))]);
    // Not 6 min − 3 s: the ttft counts from a start the usage does not give.
    expect(result.get('u2')!.break).toMatchObject({ previousRequestId: 'u1', gapMs: 6 * MINUTE, cause: 'ttl_expired' });
    const overlapping = evaluate([usageOnly('u1', 0, WARM), usageOnly('u2', 1, usage(0, 49_000))]);
    expect(overlapping.get('u2')).toMatchObject({ previousRequestId: 'u1' });
  });

  it('a break explained by a change has no cause', () => {
    const result = evaluate([turn('r1', { usage: WARM }), turn('r2', { at: 10 * MINUTE, model: 'claude-opus-4-5', usage: usage(0, 49_300) })]);
    expect(result.get('r2')!.break).toMatchObject({ reason: 'model_changed', cause: null });
  });
});

describe('§4.6 markers', () => {
  it('a negative message index is made absolute with the snapshot\'s message count', () => {
    const result = evaluate([
      turn('r1', { messageHashes: messages(5), cacheControl: { enabled: true, markers: ['messages:-1'] }, usage: WARM }),
      // The marker advanced from message 4 to message 6: no marker change.
      turn('r2', { at: MINUTE, messageHashes: messages(7), cacheControl: { enabled: true, markers: ['messages:6@5m'] }, usage: usage(0, 49_300) }),
    ]);
    expect(result.get('r2')!.break).toMatchObject({ reason: 'likely_provider_ttl_or_eviction', changesAfterCachedPrefix: [] });
  });

  it('only a re-timed marker is cache_control_changed: inside the cached prefix, at its last marker, or on the breakpoint that reaches it', () => {
    const at = (markers: string[]) =>
      evaluate([
        turn('r1', { messageHashes: messages(5), cacheControl: { enabled: true, markers: ['system:1@5m', 'messages:4@5m'] }, usage: WARM }),
        turn('r2', { at: MINUTE, messageHashes: messages(7), cacheControl: { enabled: true, markers }, usage: usage(0, 49_300) }),
      ]).get('r2')!.break!.reason;
    expect(at(['system:1@5m', 'messages:4@1h', 'messages:6@5m'])).toBe('cache_control_changed');
    expect(at(['system:1@1h', 'messages:6@5m'])).toBe('cache_control_changed');
    expect(at(['system:1@5m', 'messages:6@1h'])).toBe('cache_control_changed');
    // Markers are not part of the cache key: one added, removed or moved changes nothing the lookup reads.
    expect(at(['system:1@5m', 'messages:2@5m', 'messages:6@5m'])).toBe('likely_provider_ttl_or_eviction');
    expect(at(['messages:6@5m'])).toBe('likely_provider_ttl_or_eviction');
    expect(at(['system:1@5m', 'messages:6@5m'])).toBe('likely_provider_ttl_or_eviction');
  });

  it('a TTL flip on a raw tool definition is seen: cache_control_changed', () => {
    const body = loadRequest('claude-code');
    const [marked, flipped] = [structuredClone(body), structuredClone(body)];
    marked.tools[2].cache_control = { type: 'ephemeral' };
    flipped.tools[2].cache_control = { type: 'ephemeral', ttl: '1h' };
    const [before, after] = [buildSnapshot(marked, 'anthropic'), buildSnapshot(flipped, 'anthropic')];
    if (!before.ok || !after.ok) throw new Error('fixture did not build');
    expect(after.snapshot.tools).toEqual(before.snapshot.tools);
    const result = evaluate([
      turn('r1', { ...before.snapshot, usage: WARM }),
      turn('r2', { ...after.snapshot, at: MINUTE, usage: usage(0, 49_300) }),
    ]);
    expect(result.get('r2')!.break).toMatchObject({ reason: 'cache_control_changed', changedToolNames: [] });
  });
});

describe('§4.6 markers, continued', () => {
  const marked = (markers: string[] | undefined) => ({ messageHashes: messages(5), cacheControl: { enabled: true, ttl: '5m', ...(markers ? { markers } : {}) } });

  it('an empty or absent marker list means markers unknown: no marker change', () => {
    for (const unknown of [[], undefined]) {
      const result = evaluate([
        turn('r1', { ...marked(['system:0', 'messages:2']), usage: WARM }),
        turn('r2', { at: MINUTE, ...marked(unknown), usage: usage(0, 49_300) }),
      ]);
      expect(result.get('r2')!.break, JSON.stringify(unknown)).toMatchObject({ reason: 'likely_provider_ttl_or_eviction' });
    }
  });

  it('with automatic caching too, the last marker advancing to the newest message is no change', () => {
    const auto = (id: string, at: number, n: number, u: Usage) =>
      turn(id, { at, provider: 'openrouter', messageHashes: messages(n), cacheControl: { enabled: true, markers: [`messages:${n - 1}`] }, usage: u });
    const result = evaluate([auto('r1', 0, 4, automatic(0, 40_000)), auto('r2', MINUTE, 6, automatic(0, 41_000))]);
    expect(result.get('r2')!.break).toMatchObject({ reason: 'likely_provider_ttl_or_eviction', changesAfterCachedPrefix: [] });
  });
});

describe('§4.2 and §4.5 bounds', () => {
  it('a request not answering an hour after it started is not waited for', () => {
    const result = evaluate([
      turn('stuck', { ttftMs: 1e12, usage: usage(0, 48_900) }),
      turn('later', { at: 2 * 60 * MINUTE, usage: usage(48_900, 100) }),
    ]);
    expect(result.get('later')).toMatchObject({ state: 'hit', previousRequestId: 'stuck', concurrentRequestIds: [] });
  });

  it('partialExpiry goes with a ttl_expired cause only', () => {
    const tiered = { enabled: true, markers: ['system:1@1h', 'messages:-1@5m'] };
    const result = evaluate([
      turn('r1', { cacheControl: tiered, usage: WARM }),
      turn('r2', { at: 10 * MINUTE, cacheControl: tiered, model: 'claude-opus-4-5', usage: usage(0, 49_300) }),
    ]);
    expect(result.get('r2')!.break).toMatchObject({ reason: 'model_changed', cause: null, partialExpiry: false });
  });
});

describe('§4.9 compaction', () => {
  it('a turn in the compact stream makes the next main-stream turn expected, and only that one', () => {
    const result = evaluate([
      turn('m1', { messageHashes: messages(30), usage: WARM }),
      turn('c1', { at: MINUTE, agentId: 'compact', usage: usage(48_900, 2_000) }),
      turn('m2', { at: 2 * MINUTE, messageHashes: messages(2, 0), usage: usage(0, 12_000) }),
      turn('m3', { at: 3 * MINUTE, messageHashes: [hashString('other')], usage: usage(0, 12_000) }),
    ]);
    expect(result.get('m2')!.state).toBe('expected');
    expect(result.get('m3')!.state).toBe('miss');
  });
});

describe('§4.10 cost', () => {
  it('a model with no known price costs null, never $0', () => {
    const result = evaluate([turn('r1', { model: 'acme-coder', usage: WARM }), turn('r2', { at: MINUTE, model: 'acme-coder', usage: usage(0, 49_300) })]);
    expect(result.get('r2')!.break!.estimatedExtraCostUsd).toBeNull();
  });
});
