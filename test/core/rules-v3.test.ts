// SPEC §4 version 3, rule by rule, on the crafted cases the rules were
// changed for: markers are not part of the cache key, the lookback counts
// content blocks, each provider's rules come from its table, and the clocks
// of a turn's two parts may differ.
import { describe, expect, it } from 'vitest';
import { blocksBetween } from '../../src/core/attribution.js';
import { breakpointsOf, minCacheable, stripsEarlierThinking } from '../../src/core/caching.js';
import { hashString } from '../../src/core/hash.js';
import { toPrefix } from '../../src/core/prefix.js';
import { buildCutAnthropicSnapshot } from '../../src/core/snapshot/index.js';
import { normalizeUsage } from '../../src/core/usage.js';
import type { BreakRecord, TurnEvent, Usage } from '../../src/core/types.js';
import { snapshotOf, type Body } from './request-fixtures.js';
import { evaluate, MINUTE, SECOND, T0, TEST_OPTIONS, turn, usage } from './scenario.js';

const HOUR = 60 * MINUTE;
const WARM = usage(48_900, 400);
const COLD = usage(0, 49_300);
const messages = (n: number, edit?: number) => Array.from({ length: n }, (_, i) => hashString(`m${i}${i === edit ? '*' : ''}`));
const breakOf = (events: TurnEvent[], id: string): BreakRecord => evaluate(events).get(id)!.break!;

/** Cline's, Roo's and Copilot's markers: on the last two user messages, so both move every turn. */
function lastTwoUsers(n: number, options: { at?: number; ttl?: string; edit?: number; read?: Usage } = {}): TurnEvent {
  const ttl = options.ttl ?? '5m';
  return turn(`t${n}`, {
    at: options.at ?? 0,
    messageHashes: messages(n, options.edit),
    cacheControl: { enabled: true, markers: [`system:1@${ttl}`, `messages:${n - 3}@${ttl}`, `messages:${n - 1}@${ttl}`] },
    usage: options.read ?? WARM,
  });
}

describe('rule 1: markers are not part of the cache key', () => {
  it('the marker on the last two user messages moving is no change: a miss a minute later is the provider\'s', () => {
    const b = breakOf([lastTwoUsers(9), lastTwoUsers(11, { at: MINUTE, read: COLD })], 't11');
    expect(b).toMatchObject({ reason: 'likely_provider_ttl_or_eviction', reasons: ['likely_provider_ttl_or_eviction'], cause: 'likely_server_eviction' });
  });

  it('after a 7-minute gap it is ttl_expired, not the marker', () => {
    const b = breakOf([lastTwoUsers(9), lastTwoUsers(11, { at: 7 * MINUTE, read: COLD })], 't11');
    expect(b).toMatchObject({ reason: 'likely_provider_ttl_or_eviction', cause: 'ttl_expired', gapMs: 7 * MINUTE });
  });

  it('with an edited earlier message it is messages_rewritten', () => {
    const b = breakOf([lastTwoUsers(9), lastTwoUsers(11, { at: MINUTE, edit: 2, read: COLD })], 't11');
    expect(b).toMatchObject({ reason: 'messages_rewritten', reasons: ['messages_rewritten'], firstChangedMessageIndex: 2 });
  });

  it('a re-timed marker (5m → 1h) is cache_control_changed, but never before a change of the content, nor past the whole TTL', () => {
    expect(breakOf([lastTwoUsers(9), lastTwoUsers(11, { at: MINUTE, ttl: '1h', read: COLD })], 't11')).toMatchObject({
      reason: 'cache_control_changed',
      reasons: ['cache_control_changed'],
    });
    // The edit at message 2 comes first, although the system marker sits before it.
    expect(breakOf([lastTwoUsers(9), lastTwoUsers(11, { at: MINUTE, ttl: '1h', edit: 2, read: COLD })], 't11')).toMatchObject({
      reason: 'messages_rewritten',
      reasons: ['messages_rewritten', 'cache_control_changed'],
    });
    // Seven minutes on, the 5m entry had expired whatever the next request asked for.
    expect(breakOf([lastTwoUsers(9), lastTwoUsers(11, { at: 7 * MINUTE, ttl: '1h', read: COLD })], 't11')).toMatchObject({
      reason: 'likely_provider_ttl_or_eviction',
      cause: 'ttl_expired',
    });
  });

  it('from raw request bodies: Cline moving its two markers is no change; re-timing them is', () => {
    const body = (n: number, ttl?: string): Body => ({
      model: 'claude-sonnet-4-5',
      max_tokens: 1024,
      system: [{ type: 'text', text: 'You are Cline.', cache_control: { type: 'ephemeral' } }],
      messages: Array.from({ length: n }, (_, i) => ({
        role: i % 2 === 0 ? 'user' : 'assistant',
        content: [{ type: 'text', text: `message ${i}`, ...(i % 2 === 0 && i >= n - 3 ? { cache_control: { type: 'ephemeral', ...(ttl ? { ttl } : {}) } } : {}) }],
      })),
    });
    const request = (id: string, at: number, b: Body, u: Usage) => turn(id, { ...snapshotOf(b, 'anthropic'), at, usage: u });
    expect(snapshotOf(body(5), 'anthropic').cacheControl?.markers).toEqual(['system:0@5m', 'messages:2@5m', 'messages:4@5m']);
    expect(breakOf([request('c1', 0, body(5), WARM), request('c2', MINUTE, body(7), COLD)], 'c2').reason).toBe('likely_provider_ttl_or_eviction');
    expect(breakOf([request('c1', 0, body(5), WARM), request('c2', MINUTE, body(7, '1h'), COLD)], 'c2').reason).toBe('cache_control_changed');
  });
});

/** An Anthropic assistant message that calls `n` tools at once, and the user message with their results. */
function parallelStep(n: number, step: number): Body[] {
  return [
    { role: 'assistant', content: [{ type: 'text', text: `step ${step}` }, ...Array.from({ length: n }, (_, i) => ({ type: 'tool_use', id: `tu_${step}_${i}`, name: 'read_file', input: { path: `f${i}` } }))] },
    { role: 'user', content: Array.from({ length: n }, (_, i) => ({ type: 'tool_result', tool_use_id: `tu_${step}_${i}`, content: 'ok' })) },
  ];
}

/** A Claude Code–style request: the marker on the last block of the last message. */
function claudeBody(steps: number[]): Body {
  const messages: Body[] = [{ role: 'user', content: [{ type: 'text', text: 'fix the tests' }] }];
  steps.forEach((n, step) => messages.push(...parallelStep(n, step)));
  const last = messages.at(-1)!.content.at(-1);
  last.cache_control = { type: 'ephemeral' };
  return { model: 'claude-sonnet-4-5', max_tokens: 1024, system: [{ type: 'text', text: 'You are a coding agent.', cache_control: { type: 'ephemeral' } }], messages };
}

describe('rule 2: the lookback is 20 content blocks, not 20 messages', () => {
  it('the builders count the blocks of each message: one step of 12 parallel tool calls adds 25 blocks in 2 messages', () => {
    const snapshot = snapshotOf(claudeBody([1, 12]), 'anthropic');
    expect(snapshot.messageBlockCounts).toEqual([1, 2, 1, 13, 12]);
    expect(blocksBetween(toPrefix(snapshot), 2, 4)).toBe(25);
    // Bedrock: a cachePoint block is no content block.
    expect(snapshotOf({ modelId: 'anthropic.claude-sonnet-4-5', messages: [{ role: 'user', content: [{ text: 'a' }, { text: 'b' }, { cachePoint: { type: 'default' } }] }] }, 'bedrock').messageBlockCounts).toEqual([2]);
    // OpenAI chat: a tool call is a block; each tool result is its own message.
    const chat = snapshotOf({ model: 'qwen-plus', messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: null, tool_calls: [{ id: 'a', type: 'function', function: { name: 'f', arguments: '{}' } }, { id: 'b', type: 'function', function: { name: 'f', arguments: '{}' } }] }, { role: 'tool', tool_call_id: 'a', content: 'ok' }] }, 'openai-chat');
    expect(chat.messageBlockCounts).toEqual([1, 2, 1]);
  });

  it('one step of 12 parallel tool calls puts the new breakpoint out of reach: breakpoint_lookback_exceeded', () => {
    const request = (id: string, at: number, steps: number[], u: Usage) => turn(id, { ...snapshotOf(claudeBody(steps), 'anthropic'), at, usage: u });
    const b = breakOf([request('p1', 0, [1], WARM), request('p2', MINUTE, [1, 12], COLD)], 'p2');
    expect(b).toMatchObject({ reason: 'breakpoint_lookback_exceeded', reasons: ['breakpoint_lookback_exceeded'] });
    // Three tool calls add 7 blocks: within reach, so nothing to blame but the provider.
    expect(breakOf([request('p1', 0, [1], WARM), request('p2', MINUTE, [1, 3], COLD)], 'p2').reason).toBe('likely_provider_ttl_or_eviction');
  });

  it('block counts sent with the hashes count; without them each message is one block', () => {
    const marked = (n: number, counts?: number[]) => ({
      messageHashes: messages(n),
      ...(counts ? { messageBlockCounts: counts } : {}),
      cacheControl: { enabled: true, markers: ['system:1', `messages:${n - 1}`] },
    });
    const counted = breakOf([turn('r1', { ...marked(3), usage: WARM }), turn('r2', { at: MINUTE, ...marked(5, [1, 1, 1, 13, 12]), usage: COLD })], 'r2');
    expect(counted.reason).toBe('breakpoint_lookback_exceeded');
    const uncounted = breakOf([turn('r1', { ...marked(3), usage: WARM }), turn('r2', { at: MINUTE, ...marked(5), usage: COLD })], 'r2');
    expect(uncounted.reason).toBe('likely_provider_ttl_or_eviction');
    // A list that does not match the hashes says nothing.
    expect(toPrefix({ model: 'm', messageHashes: messages(2), messageBlockCounts: [3] }).messageBlockCounts).toBeUndefined();
  });

  it('a turn whose message markers all lie before the cached breakpoint cannot reach it either', () => {
    const marked = (n: number, at: number) => ({ messageHashes: messages(n), cacheControl: { enabled: true, markers: ['system:1', `messages:${at}`] } });
    const b = breakOf([turn('r1', { ...marked(8, 7), usage: WARM }), turn('r2', { at: MINUTE, ...marked(10, 3), usage: COLD })], 'r2');
    expect(b.reason).toBe('breakpoint_lookback_exceeded');
  });
});

/** An OpenAI Responses turn whose usage reports writes (explicit caching, SPEC §4.12). */
function responses(id: string, at: number, model: string, total: number, cached: number, extra: Partial<TurnEvent> = {}): TurnEvent {
  const result = normalizeUsage('openai', { input_tokens: total, output_tokens: 40, input_tokens_details: { cached_tokens: cached, cache_write_tokens: total - cached } });
  if (!result.ok) throw new Error(result.error);
  return turn(id, { at, provider: 'openai', model, cacheControl: { enabled: true, scope: 'auto' }, usage: result.usage, ...extra });
}

describe('rule 3: provider rules from a table', () => {
  it('gpt-5.6 breakpoints have no lookback limit', () => {
    const marked = (n: number) => ({ messageHashes: messages(n), cacheControl: { enabled: true, markers: [`messages:${n - 1}`] } });
    const b = breakOf([responses('o1', 0, 'gpt-5.6', 40_000, 0, marked(4)), responses('o2', MINUTE, 'gpt-5.6', 42_000, 0, marked(40))], 'o2');
    expect(b).toMatchObject({ reason: 'likely_provider_ttl_or_eviction', cause: 'likely_server_eviction' });
    expect(breakpointsOf('gpt-5.6').lookbackBlocks).toBeNull();
    expect(breakpointsOf('claude-sonnet-4-5').lookbackBlocks).toBe(20);
  });

  it('gpt-5.6 keeps an entry 30 minutes, writes reported or not; gpt-5.5 up to 24 h', () => {
    const b56 = breakOf([responses('o1', 0, 'gpt-5.6', 40_000, 0), responses('o2', 10 * MINUTE, 'gpt-5.6', 40_400, 0)], 'o2');
    expect(b56).toMatchObject({ cause: 'likely_server_eviction', ttlMs: 30 * MINUTE, ttlMaxMs: 24 * HOUR, ttlSource: 'provider_default' });
    const b55 = breakOf([responses('o1', 0, 'gpt-5.5', 40_000, 0), responses('o2', 3 * HOUR, 'gpt-5.5', 40_400, 0)], 'o2');
    expect(b55).toMatchObject({ cause: 'possible_ttl_expiry', ttlMs: 5 * MINUTE, ttlMaxMs: 24 * HOUR });
    // `prompt_cache_options.ttl: "30m"` is the 30 minutes declared.
    const asked = snapshotOf({ model: 'gpt-5.6', input: 'hi', prompt_cache_options: { ttl: '30m' } }, 'openai-responses');
    const declared = breakOf([responses('o1', 0, 'gpt-5.6', 40_000, 0, asked), responses('o2', 40 * MINUTE, 'gpt-5.6', 40_400, 0, asked)], 'o2');
    expect(declared).toMatchObject({ cause: 'possible_ttl_expiry', ttlMs: 30 * MINUTE, ttlSource: 'declared' });
  });

  it('Gemini 3 Pro caches from 4,096 tokens: a 3,000-token prompt is uncached, not a break', () => {
    const gemini = (id: string, at: number, model: string) =>
      turn(id, { at, provider: 'gemini', model, usage: { ...usage(0, 0, 3_000), writeReported: false } });
    const result = evaluate([gemini('g1', 0, 'gemini-3-pro-preview'), gemini('g2', MINUTE, 'gemini-3-pro-preview')]);
    expect([...result.values()].map((e) => e.state)).toEqual(['uncached', 'uncached']);
    expect(minCacheable('gemini', 'gemini-3.1-pro-preview', {})).toBe(4096);
    expect(minCacheable('gemini', 'gemini-2.5-pro', {})).toBe(2048);
    expect(minCacheable('gemini', 'gemini-2.5-flash', {})).toBe(1024);
  });

  it('minimums are overridden per model, the most specific first, then per provider', () => {
    const overrides = { openai: 2048, 'openai/gpt-4o*': 4096, 'openai/gpt-4o-mini': 512, 'gemini/gemini-2.5-flash-2025-06-17': 3000 };
    expect(minCacheable('openai', 'gpt-4o-2024-08-06', overrides)).toBe(4096);
    expect(minCacheable('azure', 'gpt-4o-mini', overrides)).toBe(512);
    expect(minCacheable('openai', 'gpt-4.1', overrides)).toBe(2048);
    // A model is compared by family: a date suffix is no other model.
    expect(minCacheable('gemini', 'models/gemini-2.5-flash', overrides)).toBe(3000);
    expect(minCacheable('deepseek', 'gpt-4o', overrides)).toBe(64);
    const state = (model: string) =>
      evaluate([turn('r', { provider: 'openai', model, usage: { ...usage(0, 0, 3_000), writeReported: false } })], { ...TEST_OPTIONS, minCacheable: overrides }).get('r')!.state;
    expect(state('gpt-4o')).toBe('uncached');
    expect(state('gpt-4.1')).toBe('cold');
  });
});

describe('rule 5: thinking blocks the API strips', () => {
  /**
   * A conversation with thinking on: a prompt, a tool step (thinking, then the
   * call), the result, an answer (its thinking redacted), the second prompt,
   * and its first tool step. Each request sends the first `n` messages, the
   * last block marked.
   */
  function thinkingBody(model: string, n: number): Body {
    const step = (i: number) => [
      { role: 'assistant', content: [{ type: 'thinking', thinking: `plan ${i}`, signature: `sig-${i}` }, { type: 'tool_use', id: `tu_${i}`, name: 'read_file', input: { path: `f${i}` } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: `tu_${i}`, content: 'ok' }] },
    ];
    const all: Body[] = [
      { role: 'user', content: [{ type: 'text', text: 'question 0' }] },
      ...step(0),
      { role: 'assistant', content: [{ type: 'redacted_thinking', data: 'r0' }, { type: 'text', text: 'answer 0' }] },
      { role: 'user', content: [{ type: 'text', text: 'question 1' }] },
      ...step(1),
    ];
    const messages = structuredClone(all.slice(0, n));
    messages.at(-1)!.content.at(-1).cache_control = { type: 'ephemeral' };
    return { model, max_tokens: 16_000, thinking: { type: 'enabled', budget_tokens: 8_000 }, system: [{ type: 'text', text: 'You are a coding agent.', cache_control: { type: 'ephemeral' } }], messages };
  }
  /** The first prompt, its tool loop, the second prompt, its tool loop. */
  const conversation = (model: string, extra: Body = {}) => [1, 3, 5, 7].map((n) => ({ ...thinkingBody(model, n), ...extra }));
  const judged = (model: string, extra: Body = {}) =>
    evaluate(conversation(model, extra).map((b, i) => turn(`k${i}`, { ...snapshotOf(b, 'anthropic'), model, at: i * MINUTE, usage: i === 2 ? COLD : WARM })));
  const clearThinking = (keep: unknown) => ({ context_management: { edits: [{ type: 'clear_thinking_20251015', ...(keep === undefined ? {} : { keep }) }] } });

  it('the table: Sonnet 4.5, Opus 4.1 and Haiku 4.5 keep only the current turn\'s thinking; Opus 4.5, Sonnet 4.6 and unknown models keep it all', () => {
    const strips = ['claude-sonnet-4-5-20250929', 'us.anthropic.claude-sonnet-4-5-20250929-v1:0', 'anthropic/claude-sonnet-4.5', 'claude-opus-4-1', 'claude-sonnet-4-20250514', 'claude-haiku-4-5', 'claude-3-7-sonnet-latest'];
    const keeps = ['claude-opus-4-5', 'claude-opus-4-7', 'claude-sonnet-4-6', 'claude-opus-5', 'claude-mythos-preview', 'gpt-5.5'];
    expect(strips.filter((m) => !stripsEarlierThinking(m))).toEqual([]);
    expect(keeps.filter((m) => stripsEarlierThinking(m))).toEqual([]);
  });

  it('on a model that strips it, a new prompt is messages_rewritten at the first assistant message that lost its thinking, never an eviction; the tool loops around it are hits', () => {
    const result = judged('claude-sonnet-4-5');
    expect(result.get('k1')!.break).toBeNull();
    expect(result.get('k2')!.break).toMatchObject({ reason: 'messages_rewritten', reasons: ['messages_rewritten'], firstChangedMessageIndex: 1, cause: null });
    expect(result.get('k3')!.break).toBeNull();
    // What is hashed is what the model sees: the thinking of the current prompt's loop stays, the earlier ones' goes.
    expect(snapshotOf(thinkingBody('claude-sonnet-4-5', 5), 'anthropic').messageBlockCounts).toEqual([1, 1, 1, 1, 1]);
    expect(snapshotOf(thinkingBody('claude-sonnet-4-5', 7), 'anthropic').messageBlockCounts).toEqual([1, 1, 1, 1, 1, 2, 1]);
    expect(snapshotOf(thinkingBody('claude-opus-4-5', 5), 'anthropic').messageBlockCounts).toEqual([1, 2, 1, 2, 1]);
  });

  it('on a model that keeps it, the same miss is the provider\'s: nothing in the prompt changed', () => {
    expect(judged('claude-opus-4-5').get('k2')!.break).toMatchObject({ reason: 'likely_provider_ttl_or_eviction', cause: 'likely_server_eviction' });
  });

  it('a clear_thinking_20251015 edit overrides the model\'s default: the latest N turns keep their thinking, or all of them', () => {
    expect(judged('claude-opus-4-5', clearThinking({ type: 'thinking_turns', value: 1 })).get('k2')!.break).toMatchObject({ reason: 'messages_rewritten', firstChangedMessageIndex: 1 });
    expect(judged('claude-opus-4-5', clearThinking(undefined)).get('k2')!.break).toMatchObject({ reason: 'messages_rewritten', firstChangedMessageIndex: 1 });
    expect(judged('claude-sonnet-4-5', clearThinking('all')).get('k2')!.break).toMatchObject({ reason: 'likely_provider_ttl_or_eviction' });
    // Two turns kept: the first prompt's step keeps its thinking when the second prompt comes.
    expect(judged('claude-sonnet-4-5', clearThinking({ type: 'thinking_turns', value: 2 })).get('k2')!.break).toMatchObject({ reason: 'likely_provider_ttl_or_eviction' });
  });

  it('a cut body keeps its messages up to one whose thinking a prompt past the cut may strip', () => {
    const body = thinkingBody('claude-sonnet-4-5', 7);
    const text = JSON.stringify(body);
    // Cut inside the last message: the second prompt (message 4) is seen, so messages 1 and 3 lost their thinking; message 5 thinks after it and may lose it too.
    const cut = buildCutAnthropicSnapshot(text.slice(0, text.lastIndexOf('tool_result')));
    if (!cut?.ok) throw new Error('the cut body did not build');
    const whole = snapshotOf(body, 'anthropic');
    expect(cut.snapshot.messageHashes).toEqual(whole.messageHashes!.slice(0, 5));
    // Cut before the second prompt: nothing says which thinking goes, so the messages stop before the first that thinks.
    const early = buildCutAnthropicSnapshot(text.slice(0, text.indexOf('question 1')));
    if (!early?.ok) throw new Error('the cut body did not build');
    expect(early.snapshot.messageHashes).toEqual(whole.messageHashes!.slice(0, 1));
  });

  it('Bedrock Converse: reasoningContent is stripped the same way', () => {
    const converse = (asks: number): Body => ({
      modelId: 'us.anthropic.claude-sonnet-4-5-20250929-v1:0',
      messages: [
        { role: 'user', content: [{ text: 'question 0' }] },
        { role: 'assistant', content: [{ reasoningContent: { reasoningText: { text: 'plan', signature: 's' } } }, { toolUse: { toolUseId: 't', name: 'read_file', input: {} } }] },
        { role: 'user', content: [{ toolResult: { toolUseId: 't', content: [{ text: 'ok' }] } }] },
        ...(asks > 1 ? [{ role: 'assistant', content: [{ text: 'answer' }] }, { role: 'user', content: [{ text: 'question 1' }] }] : []),
      ],
    });
    expect(snapshotOf(converse(1), 'bedrock').messageBlockCounts).toEqual([1, 2, 1]);
    expect(snapshotOf(converse(2), 'bedrock').messageBlockCounts).toEqual([1, 1, 1, 1, 1]);
  });
});

describe('rule 6: the clocks of a snapshot and its usage may differ', () => {
  /** A harness's snapshot at `at`, a gateway's usage whose clock runs `skew` ahead, no time to first token. */
  const skewed = (id: string, at: number, skew: number, extra: Partial<TurnEvent>) => turn(id, { at, endTs: T0 + at + 4 * SECOND + skew, ...extra });

  it('usage times minutes ahead neither invent a parallel request nor hide the break', () => {
    const changed = [{ name: 'read_file', schemaHash: 'v2' }];
    const result = evaluate([
      skewed('a', 0, 3 * MINUTE, { usage: usage(0, 48_900) }),
      skewed('b', MINUTE, 3 * MINUTE, { usage: WARM }),
      skewed('c', 2 * MINUTE, 3 * MINUTE, { tools: changed, usage: COLD }),
    ]);
    expect(result.get('b')).toMatchObject({ state: 'hit', previousRequestId: 'a', concurrentRequestIds: [] });
    expect(result.get('c')).toMatchObject({ state: 'miss', previousRequestId: 'b', concurrentRequestIds: [] });
    expect(result.get('c')!.break).toMatchObject({ reason: 'tools_schema_changed', gapMs: MINUTE });
  });

  it('usage times behind the snapshot\'s count from the request\'s own start', () => {
    const result = evaluate([skewed('a', 0, -3 * MINUTE, { usage: usage(0, 48_900) }), skewed('b', MINUTE, -3 * MINUTE, { usage: COLD })]);
    expect(result.get('b')).toMatchObject({ state: 'miss', previousRequestId: 'a', concurrentRequestIds: [] });
    expect(result.get('b')!.break).toMatchObject({ gapMs: MINUTE });
  });

  it('requests that really ran side by side are still parallel', () => {
    const result = evaluate([skewed('a', 0, 3 * MINUTE, { usage: usage(0, 48_900) }), skewed('b', 2 * SECOND, 3 * MINUTE, { usage: usage(0, 48_900) })]);
    expect(result.get('b')).toMatchObject({ state: 'cold', previousRequestId: null, concurrentRequestIds: ['a'] });
  });
});
