// The one mapping of three vocabularies onto shared verdicts, the join of a
// harness report to its break, and the agreement counts.
import { describe, expect, it } from 'vitest';
import { diagnosisIn, keptDiagnosis, providerReason } from '../../src/core/diagnosis.js';
import { BREAK_REASONS } from '../../src/core/types.js';
import { agreement, cachebreakVerdict, harnessAgrees, harnessVerdicts, joinReports, providerVerdict, VERDICTS } from '../../src/core/verdicts.js';

describe('verdicts', () => {
  it("maps every cachebreak reason, Claude Code's texts and cause codes, and Anthropic's cache_miss_reason", () => {
    for (const reason of BREAK_REASONS) expect(VERDICTS).toContain(cachebreakVerdict(reason));
    const texts: [string, string[]][] = [
      ['model changed (claude-opus-5-5 → claude-sonnet-5-5)', ['model_changed']],
      ['system prompt changed (+120 chars)', ['system_changed']],
      ['tools changed (+1/-0 tools)', ['tools_changed']],
      ['tools changed (tool prompt/schema changed, same tool set)', ['tools_changed']],
      ['defer_loading presence flipped', ['tools_changed']],
      ['cache_control changed (scope or TTL)', ['cache_control_changed']],
      ['global cache strategy changed (tool_based → system_prompt)', ['cache_control_changed']],
      ['fast mode toggled', ['request_params_changed']],
      ['betas changed (+context-1m -)', ['request_params_changed']],
      ['effort changed (high → low)', ['request_params_changed']],
      ['thinking mode changed', ['request_params_changed']],
      ['extra body params changed', ['request_params_changed']],
      ['message history mutated at index 3/12', ['messages_rewritten']],
      ['possible 5min TTL expiry (prompt unchanged)', ['no_change']],
      ['possible 1h TTL expiry (prompt unchanged)', ['no_change']],
      ['likely server-side (prompt unchanged, <5min gap)', ['no_change']],
      ['unknown cause', ['unknown']],
      // Several pending changes, joined by ", ".
      ['model changed (a → b), system prompt changed (+3 chars), tools changed (+0/-1 tools)', ['model_changed', 'tools_changed', 'system_changed']],
      // Cause codes of the status line.
      ['ttl_expired_5m', ['no_change']],
      ['likely_server_side', ['no_change']],
      ['cache_scope_or_ttl_changed', ['cache_control_changed']],
      ['thinking_display_changed', ['request_params_changed']],
      ['messages_rewritten', ['messages_rewritten']],
      ['something new', []],
    ];
    for (const [text, verdicts] of texts) expect(harnessVerdicts(text), text).toEqual(verdicts);
    expect(providerVerdict({ cache_miss_reason: { type: 'tools_changed', cache_missed_input_tokens: 9 } })).toBe('tools_changed');
    expect(providerVerdict({ diagnostics: { cache_miss_reason: { type: 'messages_changed' } } })).toBe('messages_rewritten');
    expect(providerVerdict({ type: 'model_changed' })).toBe('model_changed');
    expect(providerVerdict('system_changed')).toBe('system_changed');
    for (const none of [{ cache_miss_reason: { type: 'unavailable' } }, { type: 'previous_message_not_found' }, null, undefined, 42, ['tools_changed']]) {
      expect(providerVerdict(none)).toBeNull();
    }
    expect(harnessAgrees('tools_order_changed', 'tools changed (tool prompt/schema changed, same tool set)')).toBe(true);
    expect(harnessAgrees('unknown', 'something new')).toBe(true);
    expect(harnessAgrees('messages_rewritten', 'likely server-side (prompt unchanged, <5min gap)')).toBe(false);
  });

  const brk = (requestId: string, sessionId: string, ts: number, write: number) => ({ requestId, sessionId, ts, currentCacheReadTokens: 0, cacheWriteTokens: write });
  const report = (sessionId: string, ts: number, write: number | null, reason = 'tools changed (+1/-0 tools)') => ({
    sessionId,
    ts,
    reason,
    currentCacheReadTokens: write === null ? null : 0,
    cacheCreationTokens: write,
  });

  it('joins one report to one break: own session first, nearest in time, figures equal, within the window', () => {
    const breaks = [brk('a', 's1', 0, 500), brk('b', 's1', 120_000, 500), brk('c', 's2', 0, 500)];
    const early = report('s1', 5_000, 500);
    const late = report('s1', 125_000, 500);
    const joined = joinReports(breaks, [late, early], new Set());
    expect([...joined.entries()].sort()).toEqual([
      ['a', early],
      ['b', late],
    ]);
    // Different figures, or outside [start − 1 min, start + 10 min]: no join.
    expect(joinReports(breaks, [report('s1', 5_000, 501)], new Set()).size).toBe(0);
    expect(joinReports(breaks, [report('s1', -61_000, 500)], new Set()).size).toBe(0);
    expect(joinReports([brk('a', 's1', 0, 500)], [report('s1', 600_001, 500)], new Set()).size).toBe(0);
  });

  it('lets a report of an unknown session (a process-named log) join across sessions, only with its figures', () => {
    const breaks = [brk('a', 's1', 0, 500), brk('b', 's2', 0, 700)];
    const fromProcess = report('pid-77', 3_000, 700);
    expect(joinReports(breaks, [fromProcess], new Set()).get('b')).toBe(fromProcess);
    // A known session's report stays in its session.
    expect(joinReports(breaks, [report('s3', 3_000, 700)], new Set(['s3'])).size).toBe(0);
    // Without figures there is nothing to join by.
    expect(joinReports(breaks, [report('pid-77', 3_000, null)], new Set()).size).toBe(0);
  });

  it('counts agreement per side, and reports joined to no break apart', () => {
    const breaks = [
      { requestId: 'a', reason: 'tools_schema_changed' as const, providerDiagnosis: { cache_miss_reason: { type: 'tools_changed' } } },
      { requestId: 'b', reason: 'messages_rewritten' as const, providerDiagnosis: { cache_miss_reason: { type: 'system_changed' } } },
      { requestId: 'c', reason: 'unknown' as const, providerDiagnosis: null },
    ];
    const reports = new Map([
      ['a', report('s', 0, 1)],
      ['b', report('s', 0, 1, 'likely server-side (prompt unchanged, <5min gap)')],
    ]);
    expect(agreement(breaks, reports, 3)).toEqual({
      breaks: 3,
      harness: { compared: 2, agreed: 1, rate: 0.5, unjoinedReports: 3 },
      provider: { compared: 2, agreed: 1, rate: 0.5, alone: 1 },
      reasons: [
        { cachebreak: 'messages_rewritten', breaks: 1, harness: { compared: 1, agreed: 0, rate: 0 }, provider: { compared: 1, agreed: 0, rate: 0, alone: 0 } },
        { cachebreak: 'tools_changed', breaks: 1, harness: { compared: 1, agreed: 1, rate: 1 }, provider: { compared: 1, agreed: 1, rate: 1, alone: 0 } },
        { cachebreak: 'unknown', breaks: 1, harness: { compared: 0, agreed: 0, rate: null }, provider: { compared: 0, agreed: 0, rate: null, alone: 1 } },
      ],
      rows: [
        { cachebreak: 'messages_rewritten', harness: 'no_change', provider: 'system_changed', breaks: 1 },
        { cachebreak: 'tools_changed', harness: 'tools_changed', provider: 'tools_changed', breaks: 1 },
        { cachebreak: 'unknown', harness: null, provider: null, breaks: 1 },
      ],
    });
    expect(agreement([], new Map(), 0)).toEqual({ breaks: 0, harness: { compared: 0, agreed: 0, rate: null, unjoinedReports: 0 }, provider: { compared: 0, agreed: 0, rate: null, alone: 0 }, reasons: [], rows: [] });
  });

  it("puts OpenAI's and Anthropic's diagnoses in one provider column, per reason; a TTL break the provider says nothing on stands alone", () => {
    const openai = (reason: string) => ({ prompt_cache_diagnostics: { type: 'cache_miss', reason, cache_missed_tokens: 1_280, comparison_reusable_tokens: 1_280 } });
    const breaks = [
      { requestId: 'o1', reason: 'tools_schema_changed' as const, providerDiagnosis: openai('tools_changed') },
      { requestId: 'o2', reason: 'request_params_changed' as const, providerDiagnosis: openai('reasoning_effort_changed') },
      { requestId: 'o3', reason: 'messages_rewritten' as const, providerDiagnosis: openai('prompt_cache_key_changed') },
      { requestId: 'a1', reason: 'tools_order_changed' as const, providerDiagnosis: { diagnostics: { cache_miss_reason: { type: 'tools_changed', cache_missed_input_tokens: 9_000 } } } },
      // TTL: neither provider diagnoses it, and OpenAI's cache_hit names no reason.
      { requestId: 't1', reason: 'likely_provider_ttl_or_eviction' as const, providerDiagnosis: null },
      { requestId: 't2', reason: 'likely_provider_ttl_or_eviction' as const, providerDiagnosis: { prompt_cache_diagnostics: { type: 'cache_hit' } } },
    ];
    const result = agreement(breaks, new Map(), 0);
    expect(result.provider).toEqual({ compared: 4, agreed: 3, rate: 0.75, alone: 2 });
    expect(result.reasons.map((r) => [r.cachebreak, r.breaks, r.provider.compared, r.provider.agreed, r.provider.alone])).toEqual([
      ['no_change', 2, 0, 0, 2],
      ['tools_changed', 2, 2, 2, 0],
      ['messages_rewritten', 1, 1, 0, 0],
      ['request_params_changed', 1, 1, 1, 0],
    ]);
  });

  it("maps OpenAI's miss reasons, and finds both providers' diagnoses in raw responses, JSON or streamed", () => {
    const table: [string, string | null][] = [
      ['model_changed', 'model_changed'],
      ['tools_changed', 'tools_changed'],
      ['prompt_cache_key_changed', 'request_params_changed'],
      ['text_format_changed', 'request_params_changed'],
      ['reasoning_effort_changed', 'request_params_changed'],
      ['verbosity_changed', 'request_params_changed'],
      ['service_tier_changed', 'request_params_changed'],
      ['input_changed', 'messages_rewritten'],
      ['context_compacted', 'messages_rewritten'],
      ['something_new', null],
    ];
    for (const [reason, verdict] of table) expect(providerVerdict({ prompt_cache_diagnostics: { type: 'cache_miss', reason, cache_missed_tokens: 5 } }), reason).toBe(verdict);
    for (const none of [{ type: 'cache_hit' }, { type: 'comparison_response_not_found' }, { type: 'unavailable' }]) expect(providerVerdict({ prompt_cache_diagnostics: none })).toBeNull();
    const openaiDiagnosis = { type: 'cache_miss', reason: 'input_changed', cache_missed_tokens: 4_096, comparison_reusable_tokens: 1_024 };
    const anthropicDiagnosis = { cache_miss_reason: { type: 'system_changed', cache_missed_input_tokens: 7_000 } };
    const usage = { input_tokens: 10, output_tokens: 2 };
    // Responses JSON, and its stream (the diagnosis on response.completed).
    expect(diagnosisIn({ id: 'resp_1', object: 'response', usage, prompt_cache_diagnostics: openaiDiagnosis })).toEqual({ prompt_cache_diagnostics: openaiDiagnosis });
    expect(diagnosisIn([{ type: 'response.created', response: { usage: null } }, { type: 'response.completed', response: { usage, prompt_cache_diagnostics: openaiDiagnosis } }])).toEqual({ prompt_cache_diagnostics: openaiDiagnosis });
    // Messages JSON, and its stream (on message_start's message, or an event of its own).
    expect(diagnosisIn({ type: 'message', usage, diagnostics: anthropicDiagnosis })).toEqual({ diagnostics: anthropicDiagnosis });
    expect(diagnosisIn([{ type: 'message_start', message: { usage, diagnostics: anthropicDiagnosis } }, { type: 'message_delta', usage }])).toEqual({ diagnostics: anthropicDiagnosis });
    expect(diagnosisIn([{ type: 'message_delta', usage, diagnostics: anthropicDiagnosis }])).toEqual({ diagnostics: anthropicDiagnosis });
    expect(diagnosisIn({ usage })).toBeUndefined();
    // Only the reason (a lowercase name) and token counts are kept: never text the provider might echo.
    expect(diagnosisIn({ usage, diagnostics: { note: 'the system prompt now says: be terse', cache_miss_reason: { type: 'system_changed', excerpt: 'You are a helpful assistant.', cache_missed_input_tokens: 3 } } })).toEqual({
      diagnostics: { cache_miss_reason: { type: 'system_changed', cache_missed_input_tokens: 3 } },
    });
    expect(diagnosisIn([{ type: 'message_start', message: { usage } }])).toBeUndefined();
    // Nor a key a provider or a client filled with content, nor a word of it without spaces.
    const secret = 'You are a secret system prompt text';
    expect(diagnosisIn({ usage, diagnostics: { cache_miss_reason: { type: 'system_changed', [secret]: 1, detail: 'rm_-rf_secretword', cache_missed_input_tokens: 3 } } })).toEqual({
      diagnostics: { cache_miss_reason: { type: 'system_changed', cache_missed_input_tokens: 3 } },
    });
    expect(diagnosisIn({ usage, prompt_cache_diagnostics: { ...openaiDiagnosis, [secret]: 'x', reason: 'Secret.File.Name' } })).toEqual({
      prompt_cache_diagnostics: { type: 'cache_miss', cache_missed_tokens: 4_096, comparison_reusable_tokens: 1_024 },
    });
    // A diagnosis a client sends is kept the same way, whichever shape it sends.
    expect(keptDiagnosis({ cache_miss_reason: { type: 'tools_changed', [secret]: 2 } })).toEqual({ diagnostics: { cache_miss_reason: { type: 'tools_changed' } } });
    expect(keptDiagnosis('model_changed')).toEqual({ diagnostics: { cache_miss_reason: { type: 'model_changed' } } });
    expect(keptDiagnosis({ note: secret })).toBeUndefined();
    // OpenAI's diagnosis is never read as Anthropic's: a hit, or a miss without a reason, names no reason.
    expect(providerReason({ prompt_cache_diagnostics: { type: 'cache_hit' } })).toBeNull();
    expect(providerReason({ prompt_cache_diagnostics: { type: 'cache_miss', cache_missed_tokens: 5 } })).toBeNull();
    // The reason and the missed tokens, named as each provider names them.
    expect(providerReason({ prompt_cache_diagnostics: openaiDiagnosis })).toEqual({ provider: 'openai', reason: 'input_changed', missedTokens: 4_096 });
    expect(providerReason({ diagnostics: anthropicDiagnosis })).toEqual({ provider: 'anthropic', reason: 'system_changed', missedTokens: 7_000 });
    expect(providerVerdict(diagnosisIn({ usage, prompt_cache_diagnostics: openaiDiagnosis }))).toBe('messages_rewritten');
    expect(providerVerdict(diagnosisIn({ usage, diagnostics: anthropicDiagnosis }))).toBe('system_changed');
  });
});
