// The one mapping of three vocabularies onto shared verdicts, the join of a
// harness report to its break, and the agreement counts.
import { describe, expect, it } from 'vitest';
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
      provider: { compared: 2, agreed: 1, rate: 0.5 },
      rows: [
        { cachebreak: 'messages_rewritten', harness: 'no_change', provider: 'system_changed', breaks: 1 },
        { cachebreak: 'tools_changed', harness: 'tools_changed', provider: 'tools_changed', breaks: 1 },
        { cachebreak: 'unknown', harness: null, provider: null, breaks: 1 },
      ],
    });
    expect(agreement([], new Map(), 0)).toEqual({ breaks: 0, harness: { compared: 0, agreed: 0, rate: null, unjoinedReports: 0 }, provider: { compared: 0, agreed: 0, rate: null }, rows: [] });
  });
});
