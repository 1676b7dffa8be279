// Golden scenarios: each names a real way prompt caches break (or must not be
// reported as broken) and pins the exact state and break record.
import { describe, expect, it } from 'vitest';
import { hashString } from '../../src/core/hash.js';
import { breaksOf, evaluate, MINUTE, SECOND, SEED_TOOLS, T0, tools, turn, usage } from './scenario.js';

const WARM = usage(48_900, 400);
/** A turn starting `idle` after the previous one started: an entry is refreshed when a request starts, not when it ends (SPEC §4.5). */
const after = (previousAt: number, idle: number) => previousAt + idle;

describe('golden scenarios', () => {
  it('seed MCP re-order: tools_order_changed naming both MCP tools', () => {
    const result = evaluate([
      turn('req_06', { usage: usage(48_000, 900) }),
      turn('req_07', {
        at: 10 * SECOND,
        tools: tools(['read_file', 'shell', 'mcp__github__search_issues', 'mcp__filesystem__read_tree']),
        usage: usage(0, 48_900),
      }),
    ]);
    // The first turn of the stream read a prefix written before: a hit, not cold.
    expect(result.get('req_06')!.state).toBe('hit');
    const record = result.get('req_07')!;
    expect(record.state).toBe('miss');
    expect(record.break).toMatchObject({
      requestId: 'req_07',
      previousRequestId: 'req_06',
      reason: 'tools_order_changed',
      reasons: ['tools_order_changed'],
      cause: null,
      changedToolNames: ['mcp__filesystem__read_tree', 'mcp__github__search_issues'],
      toolChanges: {
        added: [],
        removed: [],
        schemaChanged: [],
        moved: ['mcp__filesystem__read_tree', 'mcp__github__search_issues'],
      },
      previousCacheReadTokens: 48_000,
      currentCacheReadTokens: 0,
      cacheWriteTokens: 48_900,
      expectedCacheReadTokens: 48_900,
      missedCacheReadTokens: 48_900,
      // From the start of req_06 (whose time to first token is not known) to the start of req_07.
      gapMs: 10 * SECOND,
      ttlMs: 5 * MINUTE,
      ttlSource: 'declared',
      changedSystemBlocks: null,
      firstChangedMessageIndex: null,
      providerDiagnosis: null,
    });
    // 48,900 tokens written again at $3.75/MTok instead of read at $0.30/MTok.
    expect(record.break!.estimatedExtraCostUsd).toBeCloseTo(0.168705, 6);
  });

  it('ToolSearch reveal: a deferred tool becoming visible is tools_schema_changed naming it', () => {
    const result = evaluate([
      turn('r1', { usage: WARM }),
      turn('r2', { at: 20 * SECOND, tools: tools([...SEED_TOOLS, 'mcp__jira__create_issue']), usage: usage(0, 51_000) }),
    ]);
    expect(result.get('r2')!.break).toMatchObject({
      reason: 'tools_schema_changed',
      changedToolNames: ['mcp__jira__create_issue'],
      toolChanges: { added: ['mcp__jira__create_issue'], removed: [], schemaChanged: [], moved: [] },
    });
  });

  it('MCP server reconnect: dropping then re-adding its tools breaks twice', () => {
    const github = ['mcp__github__search_issues'];
    const result = evaluate([
      turn('r1', { usage: WARM }),
      turn('r2', { at: 30 * SECOND, tools: tools(['read_file', 'shell', 'mcp__filesystem__read_tree']), usage: usage(0, 47_000) }),
      turn('r3', { at: 60 * SECOND, tools: tools(SEED_TOOLS), usage: usage(0, 48_900) }),
    ]);
    expect(result.get('r2')!.break).toMatchObject({
      reason: 'tools_schema_changed',
      changedToolNames: github,
      toolChanges: { removed: github, added: [], moved: [] },
    });
    expect(result.get('r3')!.break).toMatchObject({
      reason: 'tools_schema_changed',
      changedToolNames: github,
      toolChanges: { added: github, removed: [], moved: [] },
    });
  });

  it('a date stamped into the system prompt: system_changed at that block', () => {
    const blocks = (date: string) => [hashString('billing'), hashString(`Today is ${date}.`)];
    const result = evaluate([
      turn('r1', { systemBlockHashes: blocks('2026-11-29'), usage: WARM }),
      turn('r2', { at: 2 * MINUTE, systemBlockHashes: blocks('2026-11-30'), usage: usage(0, 49_000) }),
    ]);
    expect(result.get('r2')!.break).toMatchObject({
      reason: 'system_changed',
      reasons: ['system_changed'],
      changedSystemBlocks: [1],
      changedToolNames: [],
    });
  });

  it('model switch: model_changed', () => {
    const result = evaluate([
      turn('r1', { usage: WARM }),
      turn('r2', { at: 30 * SECOND, model: 'claude-opus-4-5', usage: usage(0, 49_000) }),
    ]);
    expect(result.get('r2')!.break).toMatchObject({ reason: 'model_changed', model: 'claude-opus-4-5' });
  });

  it('cache_control TTL flip 5m→1h: cache_control_changed', () => {
    const result = evaluate([
      turn('r1', { usage: WARM }),
      turn('r2', {
        at: 30 * SECOND,
        cacheControl: { enabled: true, ttl: '1h', scope: 'tools+system+messages', markers: ['system:1', 'messages:-1'] },
        usage: usage(0, 49_000, 120, 49_000),
      }),
    ]);
    // The retention is the baseline's: r1 declared 5m markers.
    expect(result.get('r2')!.break).toMatchObject({
      reason: 'cache_control_changed',
      ttlMs: 5 * MINUTE,
      ttlMaxMs: 5 * MINUTE,
      ttlSource: 'declared',
    });
  });

  it('6 minutes idle: likely_provider_ttl_or_eviction, cause ttl_expired', () => {
    const result = evaluate([
      turn('r1', { usage: WARM, cacheControl: undefined }),
      turn('r2', { at: after(0, 6 * MINUTE), usage: usage(0, 49_300), cacheControl: undefined }),
    ]);
    expect(result.get('r2')!.break).toMatchObject({
      reason: 'likely_provider_ttl_or_eviction',
      cause: 'ttl_expired',
      gapMs: 6 * MINUTE,
      ttlMs: 5 * MINUTE,
      ttlSource: 'provider_default',
    });
  });

  it('40 s idle, nothing changed: cause likely_server_eviction', () => {
    const result = evaluate([
      turn('r1', { usage: WARM }),
      turn('r2', { at: after(0, 40 * SECOND), usage: usage(0, 49_300) }),
    ]);
    expect(result.get('r2')!.break).toMatchObject({
      reason: 'likely_provider_ttl_or_eviction',
      cause: 'likely_server_eviction',
      gapMs: 40 * SECOND,
    });
  });

  it('61 minutes idle with a 1h TTL: ttl_expired against the 1h TTL', () => {
    const oneHour = { enabled: true, ttl: '1h', scope: 'tools+system', markers: ['system:1'] };
    const result = evaluate([
      turn('r1', { cacheControl: oneHour, usage: usage(48_900, 400, 120, 400) }),
      turn('r2', { at: after(0, 61 * MINUTE), cacheControl: oneHour, usage: usage(0, 49_300, 120, 49_300) }),
    ]);
    expect(result.get('r2')!.break).toMatchObject({
      reason: 'likely_provider_ttl_or_eviction',
      cause: 'ttl_expired',
      ttlMs: 60 * MINUTE,
      ttlSource: 'declared',
    });
  });

  it('59 minutes idle after a 1h write with no declared TTL: the default 5m tier expired, the written 1h tier held', () => {
    const result = evaluate([
      turn('r1', { cacheControl: undefined, usage: usage(48_900, 400, 120, 400) }),
      turn('r2', { at: after(0, 59 * MINUTE), cacheControl: undefined, usage: usage(0, 49_300) }),
    ]);
    expect(result.get('r2')!.break).toMatchObject({
      cause: 'ttl_expired',
      partialExpiry: true,
      ttlMs: 5 * MINUTE,
      ttlMaxMs: 60 * MINUTE,
      ttlSource: 'previous_1h_write',
    });
  });

  it('compaction declared with expectMiss: expected, not a break', () => {
    const result = evaluate([
      turn('r1', { usage: WARM }),
      turn('r2', { at: MINUTE, expectMiss: 'compaction', messageHashes: [hashString('summary')], usage: usage(0, 12_000) }),
    ]);
    expect(result.get('r2')!.state).toBe('expected');
    expect(result.get('r2')!.break).toBeNull();
  });

  it('history pruned without declaring it: messages_rewritten at the first changed index', () => {
    const history = ['u1', 'a1', 'u2', 'a2', 'u3'].map((m) => hashString(m));
    const pruned = [history[0]!, history[1]!, hashString('[tool output removed]'), history[3]!, history[4]!, hashString('a3')];
    const result = evaluate([
      turn('r1', { messageHashes: history, usage: WARM }),
      turn('r2', { at: MINUTE, messageHashes: pruned, usage: usage(20_000, 28_000) }),
    ]);
    expect(result.get('r2')!.break).toMatchObject({ reason: 'messages_rewritten', firstChangedMessageIndex: 2 });
  });

  it('an appended conversation is not a rewrite', () => {
    const history = ['u1', 'a1', 'u2'].map((m) => hashString(m));
    const result = evaluate([
      turn('r1', { messageHashes: history, usage: WARM }),
      turn('r2', { at: MINUTE, messageHashes: [...history, hashString('a2'), hashString('u3')], usage: usage(49_300, 800) }),
    ]);
    expect(result.get('r2')!.state).toBe('hit');
  });

  it('chronic miss: a stream that writes every turn and never reads breaks every turn', () => {
    const events = [0, 1, 2, 3].map((i) => turn(`r${i}`, { at: i * 30 * SECOND, usage: usage(0, 48_900 + i * 500) }));
    const result = evaluate(events);
    expect(result.get('r0')!.state).toBe('cold');
    for (const id of ['r1', 'r2', 'r3']) {
      expect(result.get(id)!.state).toBe('miss');
      expect(result.get(id)!.break!.reason).toBe('likely_provider_ttl_or_eviction');
    }
  });

  it('a subagent interleaved on its own agentId breaks neither stream', () => {
    const subagent = { agentId: 'general-purpose', tools: tools(['read_file', 'grep']), systemBlockHashes: [hashString('sub')] };
    const events = [
      turn('m1', { at: 0, usage: usage(0, 48_900) }),
      turn('s1', { at: 5 * SECOND, ...subagent, usage: usage(0, 9_000) }),
      turn('m2', { at: 10 * SECOND, usage: usage(48_900, 600) }),
      turn('s2', { at: 15 * SECOND, ...subagent, usage: usage(9_000, 300) }),
      turn('m3', { at: 20 * SECOND, usage: usage(49_500, 500) }),
    ];
    const result = evaluate(events);
    expect(breaksOf(result)).toEqual([]);
    expect(result.get('s2')!.previousRequestId).toBe('s1');
    expect(result.get('m2')!.previousRequestId).toBe('m1');
    // The same calls on one stream would look like breaks: this is why agentId exists.
    const merged = evaluate(events.map((e) => ({ ...e, agentId: 'main' })));
    expect(breaksOf(merged).length).toBeGreaterThan(0);
  });

  it('usage-only turns: unknown, with the gap still judged', () => {
    const result = evaluate([
      { type: 'usage', requestId: 'u1', sessionId: 'sess_A', ts: T0, provider: 'anthropic', usage: WARM },
      { type: 'usage', requestId: 'u2', sessionId: 'sess_A', ts: T0 + 7 * MINUTE, provider: 'anthropic', usage: usage(0, 49_000) },
    ]);
    expect(result.get('u2')!.break).toMatchObject({
      reason: 'unknown',
      reasons: ['unknown'],
      cause: 'ttl_expired',
      gapMs: 7 * MINUTE,
      estimatedExtraCostUsd: null,
    });
  });

  it('usage-only turns that name different models: model_changed', () => {
    const result = evaluate([
      { type: 'usage', requestId: 'u1', sessionId: 'sess_A', ts: T0, provider: 'anthropic', model: 'claude-sonnet-4-5', usage: WARM },
      { type: 'usage', requestId: 'u2', sessionId: 'sess_A', ts: T0 + MINUTE, provider: 'anthropic', model: 'claude-opus-4-5', usage: usage(0, 49_000) },
    ]);
    expect(result.get('u2')!.break).toMatchObject({ reason: 'model_changed', reasons: ['model_changed'], model: 'claude-opus-4-5' });
  });

  it('usage-only turns within the TTL: unknown with no cause', () => {
    const result = evaluate([
      { type: 'usage', requestId: 'u1', sessionId: 'sess_A', ts: T0, provider: 'anthropic', usage: WARM },
      { type: 'usage', requestId: 'u2', sessionId: 'sess_A', ts: T0 + MINUTE, provider: 'anthropic', usage: usage(0, 49_000) },
    ]);
    expect(result.get('u2')!.break).toMatchObject({ reason: 'unknown', cause: null });
  });

  it('a drop of fewer than 2000 tokens is not a break', () => {
    const result = evaluate([
      turn('r1', { usage: usage(10_000, 0) }),
      turn('r2', { at: MINUTE, systemBlockHashes: [hashString('changed')], usage: usage(8_500, 1_600) }),
    ]);
    expect(result.get('r2')!.state).toBe('hit');
    expect(breaksOf(result)).toEqual([]);
  });

  it('several changes at once: reason is the first in prefix order, reasons lists all', () => {
    const result = evaluate([
      turn('r1', { usage: WARM }),
      turn('r2', {
        at: MINUTE,
        model: 'claude-opus-4-5',
        tools: tools(['shell', 'read_file', 'mcp__filesystem__read_tree', 'mcp__github__search_issues']),
        systemBlockHashes: [hashString('billing'), hashString('other')],
        usage: usage(0, 49_000),
      }),
    ]);
    expect(result.get('r2')!.break).toMatchObject({
      reason: 'model_changed',
      reasons: ['model_changed', 'tools_order_changed', 'system_changed'],
      changedToolNames: ['read_file', 'shell'],
    });
  });

  it('states: uncached when nothing is read or written, unreported when no cache field came', () => {
    const result = evaluate([
      turn('r1', { usage: usage(0, 0, 5_000) }),
      turn('r2', { at: MINUTE, usage: { ...usage(0, 0, 5_000), cacheReported: false } }),
      turn('r3', { at: 2 * MINUTE, usage: usage(0, 0, 5_000) }),
    ]);
    expect(result.get('r1')!.state).toBe('uncached');
    expect(result.get('r2')!.state).toBe('unreported');
    expect(result.get('r3')!.state).toBe('uncached');
  });

  it('a first write after a turn that left nothing is cold, not a miss', () => {
    const result = evaluate([turn('r1', { usage: usage(0, 0, 5_000) }), turn('r2', { at: MINUTE, usage: usage(0, 48_000) })]);
    expect(result.get('r2')!.state).toBe('cold');
  });

  it('provider diagnostics are kept on the break', () => {
    const diagnosis = { cache_miss_reason: { type: 'tools_changed', cache_missed_input_tokens: 48_000 } };
    const result = evaluate([
      turn('r1', { usage: WARM }),
      turn('r2', { at: MINUTE, tools: tools(SEED_TOOLS, { shell: 2 }), usage: usage(0, 49_000), diagnostics: diagnosis }),
    ]);
    expect(result.get('r2')!.break).toMatchObject({
      reason: 'tools_schema_changed',
      toolChanges: { schemaChanged: ['shell'] },
      providerDiagnosis: diagnosis,
    });
  });
});
