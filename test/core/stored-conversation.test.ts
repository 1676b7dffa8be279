// OpenAI Responses requests that go on from a stored response
// (previous_response_id) or conversation: the earlier messages live on the
// provider's side and the request sends only the new input, which is no
// rewrite of the history. A miss is judged by the gap, or by what the
// request changed (model, tools, instructions, parameters).
import { describe, expect, it } from 'vitest';
import { toPrefix } from '../../src/core/prefix.js';
import { buildSnapshot } from '../../src/core/snapshot/index.js';
import type { BreakRecord, TurnEvent } from '../../src/core/types.js';
import { normalizeUsage } from '../../src/core/usage.js';
import { snapshotOf, type Body } from './request-fixtures.js';
import { evaluate, MINUTE, SECOND, T0 } from './scenario.js';

const HOUR = 60 * MINUTE;
const INSTRUCTIONS = 'You are a release assistant for the cachebreak repository.';
const TOOL = (name: string, description = 'Looks a thing up.') => ({ type: 'function', name, description, parameters: { type: 'object', properties: { id: { type: 'string' } } } });
const TOOLS = [TOOL('get_release'), TOOL('list_issues')];

function body(text: string, extra: Body = {}): Body {
  return { model: 'gpt-4.1', instructions: INSTRUCTIONS, tools: TOOLS, input: [{ role: 'user', content: [{ type: 'input_text', text }] }], ...extra };
}

/** The first request sends its whole input; each next one only what is new, after the previous response. */
const chained = (n: number, extra: Body = {}) => body(`Question ${n}`, { previous_response_id: `resp_${n - 1}`, ...extra });

function call(requestId: string, request: Body, at: number, input: number, cached: number): TurnEvent {
  const usage = normalizeUsage('openai', { input_tokens: input, input_tokens_details: { cached_tokens: cached }, output_tokens: 40 });
  if (!usage.ok) throw new Error(usage.error);
  return { type: 'turn', requestId, sessionId: 'chain', agentId: 'main', ts: T0 + at, endTs: T0 + at + 2 * SECOND, provider: 'openai', ...snapshotOf(request, 'openai-responses'), usage: usage.usage };
}

const breakOf = (events: TurnEvent[], id: string): BreakRecord | null => evaluate(events).get(id)!.break;

describe('a Responses request after a stored response', () => {
  it('says it continues one, and its new input is messages, a developer item too', () => {
    const first = snapshotOf(body('Question 1'), 'openai-responses');
    expect(first.continuesResponse).toBeUndefined();
    const next = snapshotOf(chained(2, { input: [{ role: 'developer', content: 'Answer briefly.' }, { role: 'user', content: 'Question 2' }] }), 'openai-responses');
    expect(next.continuesResponse).toBe(true);
    // The developer item follows the stored conversation: it is not the system prompt.
    expect(next.systemHash).toBe(first.systemHash);
    expect(next.messageHashes).toHaveLength(2);
    expect(snapshotOf(body('Question 2', { conversation: 'conv_689667905b048191b4740501625afd940c7533ace33a2dab' }), 'openai-responses').continuesResponse).toBe(true);
    expect(snapshotOf(body('Question 2', { conversation: { id: 'conv_6896' } }), 'openai-responses').continuesResponse).toBe(true);
    expect(snapshotOf(body('Question 2', { previous_response_id: null }), 'openai-responses').continuesResponse).toBeUndefined();
  });

  it('a previous_response_id or conversation that is not an id is refused, naming the field', () => {
    expect(buildSnapshot(chained(2, { previous_response_id: 42 }), 'openai-responses')).toMatchObject({ ok: false, field: 'previous_response_id' });
    expect(buildSnapshot(body('Q', { conversation: { name: 'x' } }), 'openai-responses')).toMatchObject({ ok: false, field: 'conversation.id' });
  });

  it('compares no messages, message markers or blocks of the new input: their place in the prompt is not known', () => {
    const prefix = toPrefix(snapshotOf(chained(2, { input: [{ role: 'user', content: [{ type: 'input_text', text: 'Q2', prompt_cache_breakpoint: {} }, { type: 'input_text', text: 'and more' }] }] }), 'openai-responses'));
    expect(prefix.messageHashes).toBeUndefined();
    expect(prefix.messageBlockCounts).toBeUndefined();
    expect(prefix.markers ?? []).not.toContainEqual(expect.stringMatching(/^messages/));
    expect(prefix.systemHash).toBeDefined();
    expect(prefix.tools).toHaveLength(2);
  });

  it('a chain of three: a hit, then a miss after two hours is ttl_expired, then a tools change is tools_schema_changed; never messages_rewritten', () => {
    const events = [
      call('r1', body('Question 1'), 0, 6_000, 0),
      call('r2', chained(2), MINUTE, 6_200, 5_888),
      call('r3', chained(3), MINUTE + 2 * HOUR, 6_400, 0),
      call('r4', chained(4, { tools: [...TOOLS, TOOL('web_fetch')] }), 2 * MINUTE + 2 * HOUR, 6_900, 0),
    ];
    const evaluations = evaluate(events);
    expect(evaluations.get('r2')).toMatchObject({ state: 'hit', break: null });
    expect(evaluations.get('r3')!.break).toMatchObject({ reason: 'likely_provider_ttl_or_eviction', reasons: ['likely_provider_ttl_or_eviction'], cause: 'ttl_expired', firstChangedMessageIndex: null });
    expect(evaluations.get('r4')!.break).toMatchObject({ reason: 'tools_schema_changed', reasons: ['tools_schema_changed'], changedToolNames: ['web_fetch'], cause: null });
  });

  it('a miss a minute later with nothing changed is the provider\'s eviction; changed instructions or model are named', () => {
    const start = [call('r1', body('Question 1'), 0, 6_000, 0), call('r2', chained(2), MINUTE, 6_200, 5_888)];
    expect(breakOf([...start, call('r3', chained(3), 2 * MINUTE, 6_400, 0)], 'r3')).toMatchObject({ reason: 'likely_provider_ttl_or_eviction', cause: 'likely_server_eviction' });
    expect(breakOf([...start, call('r3', chained(3, { instructions: `${INSTRUCTIONS} Be terse.` }), 2 * MINUTE, 6_400, 0)], 'r3')).toMatchObject({
      reason: 'system_changed',
      reasons: ['system_changed'],
      changedSystemBlocks: [0],
    });
    expect(breakOf([...start, call('r3', chained(3, { model: 'gpt-5.5' }), 2 * MINUTE, 6_400, 0)], 'r3')).toMatchObject({ reason: 'model_changed' });
  });

  it('a client that stops chaining and sends the whole history again is not judged on messages either way', () => {
    const full = body('Question 1', {
      input: [
        { role: 'user', content: 'Question 1' },
        { role: 'assistant', content: 'Answer 1' },
        { role: 'user', content: 'Question 2' },
        { role: 'assistant', content: 'Answer 2' },
        { role: 'user', content: 'Question 3' },
      ],
    });
    const b = breakOf([call('r1', body('Question 1'), 0, 6_000, 0), call('r2', chained(2), MINUTE, 6_200, 5_888), call('r3', full, 2 * MINUTE, 6_400, 0)], 'r3');
    expect(b).toMatchObject({ reason: 'likely_provider_ttl_or_eviction', cause: 'likely_server_eviction' });
  });
});
