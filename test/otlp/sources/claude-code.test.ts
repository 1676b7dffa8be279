import { describe, expect, it } from 'vitest';
import { hashValue } from '../../../src/core/hash.js';
import type { SnapshotEvent } from '../../../src/core/types.js';
import type { LogRecord } from '../../../src/ingest/otlp/records.js';
import { claudeAgent } from '../../../src/ingest/otlp/sources/claude-code.js';
import { createMappingContext } from '../../../src/ingest/otlp/sources/index.js';
import { fixture, judged, mapped, only, store, totalInput, turns, usageOf } from './helpers.js';

const v88 = fixture('claude-code/2.1.88.json');
const v332 = fixture('claude-code/2.1.332.json');
const compaction = fixture('claude-code/2.1.332-compaction.json');
const S88 = '3d9e1f20-7a4b-4c5d-9e8f-a1b2c3d4e5f6';
const S332 = 'e8a1c3f5-2b4d-4f6a-8c0e-1a3c5e7a9b1d';

const named = (name: string) => (r: LogRecord) => r.body === `claude_code.${name}`;

describe('Claude Code 2.1.88', () => {
  it('reads string counts, and input_tokens as EXCLUSIVE of the cache', () => {
    const result = mapped(v88);
    expect(result.rejected).toEqual([]);
    expect(result.ignored).toEqual({ unused_event: 2 });
    const [cold, hit] = result.events;
    expect(cold).toMatchObject({ type: 'usage', agentId: 'main', provider: 'anthropic', model: 'claude-sonnet-4-5-20250929' });
    // 2.1.88 sends no ttft_ms.
    expect(result.events.filter((e) => e.type === 'usage' && e.ttftMs !== undefined)).toEqual([]);
    const usage = usageOf(result.events, hit!.requestId);
    expect(usage).toEqual({ uncached: 6, read: 18250, write: 512, write1h: 0, output: 402, cacheReported: true, writeReported: true });
    expect(totalInput(usage)).toBe(6 + 18250 + 512);
  });

  it('derives a request id that is the same when the record is sent again', async () => {
    const ids = mapped(v88).events.map((e) => e.requestId);
    expect(ids.every((id) => /^claude_code:[0-9a-f]{16}$/.test(id))).toBe(true);
    expect(new Set(ids).size).toBe(3);
    expect(mapped(v88).events.map((e) => e.requestId)).toEqual(ids);
    const { store: s, counts } = await store(mapped(v88), mapped(v88));
    expect(counts).toEqual({ accepted: 3, duplicates: 3 });
    expect((await turns(s, S88)).map((v) => v.state)).toEqual(['cold', 'hit', 'miss']);
    const [record] = (await s.breaks('default', {}, {}, { limit: 5 })).items;
    // Without the bodies nothing can be claimed, but the gap is measured.
    expect(record).toMatchObject({ reason: 'unknown', cause: 'ttl_expired', missedCacheReadTokens: 18250 + 512 });
  });
});

describe('Claude Code 2.1.332 with OTEL_LOG_RAW_API_BODIES=1', () => {
  it('maps api_request with request_id and query_source, and each body pair to one snapshot', () => {
    const result = mapped(v332);
    expect(result.rejected).toEqual([]);
    expect(result.ignored).toEqual({ unused_event: 2 });
    const usage = result.events.filter((e) => e.type === 'usage');
    const snapshots = result.events.filter((e) => e.type === 'snapshot');
    expect(usage.map((e) => [e.requestId, e.agentId])).toEqual([
      ['req_011CUaA1xZ', 'main'],
      ['req_011CUaB2yQ', 'general-purpose#a7f3e2c'],
      ['req_011CUaC3zR', 'main'],
      ['req_011CUaD4wS', 'main'],
    ]);
    expect(snapshots.map((e) => [e.requestId, e.agentId])).toEqual(usage.map((e) => [e.requestId, e.agentId]));
    // ttft_ms: when each call's cache entry became readable.
    expect(usage.map((e) => e.type === 'usage' && e.ttftMs)).toEqual([1800, 1800, 1800, 1800]);
    expect(usageOf(result.events, 'req_011CUaA1xZ')).toEqual({ uncached: 4, read: 0, write: 21400, write1h: 21000, output: 310, cacheReported: true, writeReported: true });
  });

  it('builds the full snapshot from the body: 3 system blocks, tools in order, markers, message hashes', () => {
    const [snapshot] = mapped(v332).events.filter((e) => e.type === 'snapshot');
    expect(snapshot).toMatchObject({
      model: 'claude-sonnet-4-5-20250929',
      provider: 'anthropic',
      ts: v332.logs.find(named('api_request_body'))!.timeMs,
      cacheControl: { enabled: true, ttl: '5m', markers: ['system:1@1h', 'system:2@1h', 'messages:0@5m'] },
    });
    if (snapshot?.type !== 'snapshot') throw new Error('expected a snapshot');
    expect(snapshot.systemBlockHashes).toHaveLength(3);
    expect(snapshot.tools?.map((t) => t.name)).toEqual([
      'Task', 'Bash', 'Glob', 'Read', 'Edit', 'mcp__filesystem__read_tree', 'mcp__github__search_issues',
    ]);
    expect(snapshot.messageHashes).toHaveLength(1);
  });

  it('names the re-ordered MCP tools as the cause of the break, with the subagent in its own stream', async () => {
    const { store: s, counts } = await store(mapped(v332));
    expect(counts).toEqual({ accepted: 8, duplicates: 0 });
    const views = await turns(s, S332);
    expect(views.map((v) => [v.requestId, v.agentId, v.state])).toEqual([
      ['req_011CUaA1xZ', 'main', 'cold'],
      ['req_011CUaB2yQ', 'general-purpose#a7f3e2c', 'cold'],
      ['req_011CUaC3zR', 'main', 'hit'],
      ['req_011CUaD4wS', 'main', 'miss'],
    ]);
    const [record] = (await s.breaks('default', {}, {}, { limit: 5 })).items;
    expect(record).toMatchObject({
      requestId: 'req_011CUaD4wS',
      previousRequestId: 'req_011CUaC3zR',
      reason: 'tools_order_changed',
      reasons: ['tools_order_changed'],
      changedToolNames: ['mcp__filesystem__read_tree', 'mcp__github__search_issues'],
      toolChanges: { added: [], removed: [], schemaChanged: [], moved: ['mcp__filesystem__read_tree', 'mcp__github__search_issues'] },
    });
  });

  it('joins a body pair that arrives in two requests, in either order, and keeps only hashes while waiting', () => {
    const bodies = v332.logs.filter((r) => named('api_request_body')(r) || named('api_response_body')(r));
    for (const order of [bodies, [...bodies].reverse()]) {
      const context = createMappingContext();
      const events = order.flatMap((record) => mapped(only({ logs: [record] }), context).events);
      expect(events.map((e) => e.requestId).sort()).toEqual(['req_011CUaA1xZ', 'req_011CUaB2yQ', 'req_011CUaC3zR', 'req_011CUaD4wS']);
      expect(context.claudeBodies.size + context.claudeRequestIds.size).toBe(0);
    }
    const context = createMappingContext();
    mapped(only({ logs: [v332.logs.find(named('api_request_body'))!] }), context);
    const waiting = context.claudeBodies.peek(JSON.stringify([S332, 'rb-0001']));
    expect(JSON.stringify(waiting)).not.toContain('billing-header');
    expect(Object.keys(waiting!)).toEqual(['snapshot', 'sessionId', 'agentId', 'provider', 'ts']);
    // thinking, which a body may make any size, waits as its hash: the one prefix comparison uses.
    expect(waiting!.snapshot).not.toHaveProperty('thinking');
    expect(waiting!.snapshot.thinkingHash).toBe(hashValue({ type: 'enabled', budget_tokens: 31999 }));
  });

  it('bounds what waits in bytes across tables: the oldest half of any table goes, and is counted', () => {
    const evicted: string[] = [];
    const context = createMappingContext({ maxBytes: 10_000, evicted: (table, reason) => evicted.push(`${table}:${reason}`) });
    const body = v332.logs.find(named('api_request_body'))!;
    mapped(only({ logs: [{ ...body, attributes: { ...body.attributes, request_body_id: 'rb-a' } }] }), context);
    const one = context.waitingBytes;
    expect(one).toBeGreaterThan(500);
    context.claudeRequestIds.set('x', 'r'.repeat(Math.floor((10_000 - one) / 2) - 100));
    expect(evicted).toEqual([]);
    // A second body does not fit beside the two: the oldest, the first body, goes.
    mapped(only({ logs: [{ ...body, attributes: { ...body.attributes, request_body_id: 'rb-b' } }] }), context);
    expect(evicted).toEqual(['claude_request_bodies:bytes']);
    expect(context.claudeBodies.peek(JSON.stringify([S332, 'rb-a']))).toBeUndefined();
    expect(context.claudeRequestIds.peek('x')).toBeDefined();
    expect(context.waitingBytes).toBeLessThanOrEqual(10_000);
    // One half larger than the whole budget is not kept, and pushes nothing out.
    context.claudeRequestIds.set('y', 'r'.repeat(10_000));
    expect(evicted).toEqual(['claude_request_bodies:bytes', 'claude_request_ids:bytes']);
    expect(context.claudeBodies.peek(JSON.stringify([S332, 'rb-b']))).toBeDefined();
  });

  it('bounds what waits: by count and by age', () => {
    let now = 0;
    const context = createMappingContext({ capacity: 2, maxAgeMs: 60_000, now: () => now });
    const body = v332.logs.find(named('api_request_body'))!;
    for (const id of ['rb-a', 'rb-b', 'rb-c']) {
      mapped(only({ logs: [{ ...body, attributes: { ...body.attributes, request_body_id: id } }] }), context);
    }
    expect(context.claudeBodies.size).toBe(2);
    expect(context.claudeBodies.peek(JSON.stringify([S332, 'rb-a']))).toBeUndefined();
    now = 61_000;
    expect(context.claudeBodies.size).toBe(0);
  });

  it('makes a partial snapshot of a body cut short by the content limit, and rejects a body that is not JSON', () => {
    const body = v332.logs.find(named('api_request_body'))!;
    const response = v332.logs.find((r) => named('api_response_body')(r) && r.attributes['request_body_id'] === body.attributes['request_body_id'])!;
    const text = body.attributes['body'] as string;
    const whole = JSON.parse(text) as { tools: { name: string }[] };
    // Cut inside the fourth tool: the three before it are whole.
    const at = text.indexOf(`"name":"${whole.tools[3]!.name}"`) + 10;
    const cut = { ...body, attributes: { ...body.attributes, body: text.slice(0, at) } };
    const result = mapped(only({ logs: [cut, response] }));
    expect(result.rejected).toEqual([]);
    const snapshot = result.events[0] as SnapshotEvent;
    expect(snapshot.partial).toBe('tools');
    expect(snapshot.tools!.map((t) => t.name)).toEqual(whole.tools.slice(0, 3).map((t) => t.name));
    // Past the cut: unknown, so absent (not empty).
    expect([snapshot.messageHashes, snapshot.thinking, snapshot.cacheControl, snapshot.params]).toEqual([undefined, undefined, undefined, undefined]);

    const member = text.indexOf('"stream":');
    const garbled = { ...body, attributes: { ...body.attributes, body: `${text.slice(0, member)}]]${text.slice(member, 2000)}` } };
    expect(mapped(only({ logs: [garbled] })).rejected).toEqual([
      { record: 'logs[0] (claude-code)', error: `body: not valid JSON, nor the start of a JSON object cut short (2002 of ${text.length} characters)` },
    ]);
  });

  it('maps query_source to streams: the main thread, compaction, subagent runs, other side queries', () => {
    expect(claudeAgent({ query_source: 'sdk' })).toBe('main');
    expect(claudeAgent({ query_source: 'repl_main_thread' })).toBe('main');
    expect(claudeAgent({ query_source: 'repl_main_thread:outputStyle:explanatory' })).toBe('main');
    expect(claudeAgent({ query_source: 'compact' })).toBe('compact');
    expect(claudeAgent({})).toBe('main');
    expect(claudeAgent({ query_source: 'agent:builtin:general-purpose' })).toBe('agent:builtin:general-purpose');
    expect(claudeAgent({ query_source: 'agent:custom', 'agent.name': 'reviewer', agent_id: 'a1' })).toBe('reviewer#a1');
    expect(claudeAgent({ query_source: 'side_question' })).toBe('side_question');
  });
});

describe('Claude Code 2.1.332 compaction (query_source compact)', () => {
  const COMPACT_CALL = 'req_011CUcC3pQ';
  const AFTER = 'req_011CUcD4qR';

  it('puts the compaction request, usage and body snapshot, in the session\'s compact stream', () => {
    const result = mapped(compaction);
    expect(result.rejected).toEqual([]);
    expect(result.events.map((e) => [e.type, e.requestId, e.agentId])).toEqual([
      ['snapshot', 'req_011CUcA1mN', 'main'],
      ['usage', 'req_011CUcA1mN', 'main'],
      ['snapshot', 'req_011CUcB2nP', 'main'],
      ['usage', 'req_011CUcB2nP', 'main'],
      ['snapshot', COMPACT_CALL, 'compact'],
      ['usage', COMPACT_CALL, 'compact'],
      ['snapshot', AFTER, 'main'],
      ['usage', AFTER, 'main'],
    ]);
  });

  it('makes the first main call after it an expected miss, not a break', () => {
    const events = mapped(compaction).events;
    expect(judged(events)).toEqual({ 'req_011CUcA1mN': 'cold', 'req_011CUcB2nP': 'hit', [COMPACT_CALL]: 'hit', [AFTER]: 'expected' });
    // Kept in the main stream, the compaction would hide nothing: the next call is a break.
    const inMain = events.map((e) => (e.requestId === COMPACT_CALL ? { ...e, agentId: 'main' } : e));
    expect(judged(inMain)[AFTER]).toBe('miss');
  });
});

describe('Claude Code 2.1.332, prefix changes between calls (raw bodies)', () => {
  const changes = fixture('claude-code/2.1.332-changes.json');
  const SESSION_X = 'b7d9f1a3-5c6e-4a8b-9d0f-2e4c6a8b0d1f';

  it('names the denied tool and the rewritten tool result; a CLAUDE.md edit leaves the prefix whole', async () => {
    const { store: s } = await store(mapped(changes));
    const views = await turns(s, SESSION_X);
    expect(views.map((v) => v.state)).toEqual(['cold', 'hit', 'miss', 'hit', 'hit', 'miss']);
    const { items } = await s.breaks('default', {}, {}, { limit: 10 });
    expect([...items].reverse().map((b) => [b.reason, b.reasons, b.changedToolNames, b.firstChangedMessageIndex])).toEqual([
      ['tools_schema_changed', ['tools_schema_changed'], ['Bash'], null],
      ['messages_rewritten', ['messages_rewritten'], [], 2],
    ]);
  });

  it('without the bodies, the same breaks are found but their reason is unknown', async () => {
    const { store: s } = await store(mapped(only({ logs: changes.logs.filter(named('api_request')) })));
    const { items } = await s.breaks('default', {}, {}, { limit: 10 });
    expect(items.map((b) => b.reason)).toEqual(['unknown', 'unknown']);
  });
});
