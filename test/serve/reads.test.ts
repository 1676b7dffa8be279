// The read API in-process: filters, time ranges, pagination and every
// parameter mistake answered 400 with the parameter named.
import { describe, expect, it } from 'vitest';
import { hashString } from '../../src/core/hash.js';
import { SEED_TOOLS, toWire, tools, turn, usage } from '../core/scenario.js';
import { storeApp } from './harness.js';

/** Two sessions; sess_A breaks twice (tools order, then model), sess_B once (system), on another agent too. */
function workload() {
  return [
    turn('a1', { usage: usage(48_000, 900) }),
    turn('a2', { at: 10_000, tools: tools([...SEED_TOOLS].reverse()), usage: usage(0, 48_900) }),
    turn('a3', { at: 20_000, tools: tools([...SEED_TOOLS].reverse()), usage: usage(48_900, 100) }),
    turn('a4', { at: 30_000, tools: tools([...SEED_TOOLS].reverse()), model: 'claude-opus-4-5', usage: usage(0, 49_000) }),
    turn('b1', { sessionId: 'sess_B', agentId: 'reviewer', at: 60_000, usage: usage(0, 30_000) }),
    turn('b2', { sessionId: 'sess_B', agentId: 'reviewer', at: 70_000, systemBlockHashes: [hashString('x')], usage: usage(0, 30_000) }),
  ].map(toWire);
}

async function loaded() {
  const app = await storeApp();
  const response = await app.post({ events: workload() });
  expect(await response.json()).toEqual({ accepted: 6, duplicates: 0, rejected: [] });
  return app;
}

describe('GET /v1/breaks', () => {
  it('lists breaks newest first, with SPEC §6 fields and RFC 3339 times', async () => {
    const { get } = await loaded();
    const { status, body } = await get('/v1/breaks');
    expect(status).toBe(200);
    expect(body.breaks.map((b: any) => [b.requestId, b.reason])).toEqual([
      ['b2', 'system_changed'],
      ['a4', 'model_changed'],
      ['a2', 'tools_order_changed'],
    ]);
    expect(body.breaks[2]).toMatchObject({
      ts: '2026-11-30T10:00:10.000Z',
      previousRequestId: 'a1',
      changedToolNames: [...SEED_TOOLS].sort(),
    });
    expect(body.nextCursor).toBeNull();
  });

  it('filters by session, agent, model, provider, reason and time, with several values', async () => {
    const { get } = await loaded();
    const ids = async (query: string) => (await get(`/v1/breaks?${query}`)).body.breaks.map((b: any) => b.requestId);
    expect(await ids('sessionId=sess_B')).toEqual(['b2']);
    expect(await ids('agentId=main')).toEqual(['a4', 'a2']);
    expect(await ids('model=claude-opus-4-5')).toEqual(['a4']);
    expect(await ids('reason=tools_order_changed,system_changed')).toEqual(['b2', 'a2']);
    expect(await ids('reason=tools_order_changed&reason=model_changed')).toEqual(['a4', 'a2']);
    expect(await ids('provider=openai')).toEqual([]);
    expect(await ids('model=unknown-model')).toEqual([]);
    expect(await ids('from=2026-11-30T10:00:15Z&to=1796032865000')).toEqual(['a4']);
  });

  // The workload above is all Anthropic, so only an empty answer was checked;
  // a filter that matched nothing at all would have passed.
  it('filters by provider: each provider gets its own breaks', async () => {
    const { get, post } = await loaded();
    const openai = { sessionId: 'sess_C', provider: 'openai', model: 'gpt-4.1' } as const;
    const reply = await post({
      events: [
        turn('c1', { ...openai, at: 80_000, usage: usage(0, 0, 30_000) }),
        turn('c2', { ...openai, at: 90_000, usage: usage(29_000, 0, 1_000) }),
        turn('c3', { ...openai, at: 100_000, systemBlockHashes: [hashString('date: 2026-12-01')], usage: usage(0, 0, 30_500) }),
      ].map(toWire),
    });
    expect(await reply.json()).toMatchObject({ accepted: 3, rejected: [] });
    const ids = async (query: string) => (await get(`/v1/breaks?${query}`)).body.breaks.map((b: any) => [b.requestId, b.provider]);
    expect(await ids('provider=openai')).toEqual([['c3', 'openai']]);
    expect(await ids('provider=anthropic')).toEqual([['b2', 'anthropic'], ['a4', 'anthropic'], ['a2', 'anthropic']]);
    expect(await ids('provider=openai,anthropic')).toEqual([['c3', 'openai'], ['b2', 'anthropic'], ['a4', 'anthropic'], ['a2', 'anthropic']]);
    expect(await ids('provider=openai&sessionId=sess_A')).toEqual([]);
  });

  it('pages with an opaque cursor until nothing is left', async () => {
    const { get } = await loaded();
    const first = await get('/v1/breaks?limit=2');
    expect(first.body.breaks.map((b: any) => b.requestId)).toEqual(['b2', 'a4']);
    const second = await get(`/v1/breaks?limit=2&cursor=${first.body.nextCursor}`);
    expect(second.body.breaks.map((b: any) => b.requestId)).toEqual(['a2']);
    expect(second.body.nextCursor).toBeNull();
  });

  it.each([
    ['limit=0', 'limit: expected a whole number from 1 to 1000, got "0"'],
    ['limit=abc', 'limit: expected a whole number from 1 to 1000'],
    ['from=yesterday', 'from: expected RFC 3339 or epoch milliseconds, got "yesterday"'],
    ['from=2026-11-30T12:00:00Z&to=2026-11-30T11:00:00Z', 'from: must be earlier than to'],
    ['cursor=not-a-cursor', 'cursor: not a cursor this server issued'],
  ])('answers %s with 400 naming the parameter', async (query, message) => {
    const { get } = await loaded();
    const { status, body } = await get(`/v1/breaks?${query}`);
    expect(status).toBe(400);
    expect(body.error.code).toBe('bad_request');
    expect(body.error.message).toContain(message);
    expect(body.error.hint).toBeTruthy();
    expect(body.error.requestId).toBeTruthy();
  });
});

describe('GET /v1/sessions', () => {
  it('summarises each session across its agents, most recent first', async () => {
    const { get } = await loaded();
    const { body } = await get('/v1/sessions');
    expect(body.sessions.map((s: any) => s.sessionId)).toEqual(['sess_B', 'sess_A']);
    const a = body.sessions[1];
    expect(a).toMatchObject({ agentIds: ['main'], turns: 4, breaks: 2, firstSeen: '2026-11-30T10:00:00.000Z', lastSeen: '2026-11-30T10:00:30.000Z' });
    const read = 48_000 + 48_900;
    const input = 4 * 120 + read + 900 + 48_900 + 100 + 49_000;
    expect(a.cacheRate).toBeCloseTo(read / input, 12);
    expect(a.tokens).toEqual({ uncached: 480, read, write: 900 + 48_900 + 100 + 49_000, write1h: 0, output: 1200 });
    expect(body.sessions[0].agentIds).toEqual(['reviewer']);
  });

  it('sums each session\'s missed cache-read tokens and estimated extra cost over its breaks', async () => {
    const { get } = await loaded();
    const { body } = await get('/v1/sessions');
    const byId = Object.fromEntries(body.sessions.map((s: any) => [s.sessionId, s]));
    // Every miss here is a full rewrite at the 5-minute write price (1.25×)
    // instead of a read (0.1×): 1.15 × the input price per missed token.
    // a2 misses a1's 48,000 + 900; a4 misses a3's 48,900 + 100 (on Opus 4.5, $5).
    expect(byId.sess_A.missedCacheReadTokens).toBe(48_900 + 49_000);
    expect(byId.sess_A.estimatedExtraCostUsd).toBe(0.450455); // 48,900 × 1.15 × $3 + 49,000 × 1.15 × $5, per MTok
    // b2 misses b1's 30,000 (Sonnet 4.5, $3).
    expect(byId.sess_B.missedCacheReadTokens).toBe(30_000);
    expect(byId.sess_B.estimatedExtraCostUsd).toBe(0.1035);
  });

  it('ranks the worst cache rate and the largest extra cost first', async () => {
    const { get } = await loaded();
    const order = async (by: string) => (await get(`/v1/sessions?order=${by}`)).body.sessions.map((s: any) => s.sessionId);
    // sess_B never read from the cache; sess_A's two breaks cost more (one on an Opus price).
    expect(await order('worst_cache_rate')).toEqual(['sess_B', 'sess_A']);
    expect(await order('extra_cost')).toEqual(['sess_A', 'sess_B']);
    const paged = await get('/v1/sessions?order=worst_cache_rate&limit=1');
    const next = await get(`/v1/sessions?order=worst_cache_rate&limit=1&cursor=${paged.body.nextCursor}`);
    expect(next.body.sessions.map((s: any) => s.sessionId)).toEqual(['sess_A']);
    const bad = await get('/v1/sessions?order=best');
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toBe('order: expected one of recent, worst_cache_rate, extra_cost, got "best"');
  });

  it('lists a session\'s turns in order with state, usage and break', async () => {
    const { get } = await loaded();
    const { status, body } = await get('/v1/sessions/sess_A/turns');
    expect(status).toBe(200);
    // a1 read a prefix written before the session's first turn: a hit.
    expect(body.turns.map((t: any) => [t.requestId, t.state, t.break?.reason ?? null, t.previousRequestId])).toEqual([
      ['a1', 'hit', null, null],
      ['a2', 'miss', 'tools_order_changed', 'a1'],
      ['a3', 'hit', null, 'a2'],
      ['a4', 'miss', 'model_changed', 'a3'],
    ]);
    expect(body.turns[0]).toMatchObject({
      agentId: 'main',
      provider: 'anthropic',
      model: 'claude-sonnet-4-5',
      usage: { read: 48_000, write: 900, cacheReported: true },
      previousRequestId: null,
      concurrentRequestIds: [],
    });
  });

  it('answers an unknown session with 404', async () => {
    const { get } = await loaded();
    const { status, body } = await get('/v1/sessions/nope/turns');
    expect(status).toBe(404);
    expect(body.error).toMatchObject({ code: 'not_found', message: 'no session "nope"' });
  });
});

describe('GET /v1/stats', () => {
  it('buckets cache rate and tokens over time, by a dimension', async () => {
    const { get } = await loaded();
    const { status, body } = await get('/v1/stats?from=2026-11-30T10:00:00Z&to=2026-11-30T10:02:00Z&interval=1m&groupBy=agentId');
    expect(status).toBe(200);
    expect(body.buckets.map((b: any) => [b.ts, b.group, b.turns, b.breaks])).toEqual([
      ['2026-11-30T10:00:00.000Z', 'main', 4, 2],
      ['2026-11-30T10:01:00.000Z', 'reviewer', 2, 1],
    ]);
    expect(body.buckets[1].cacheRate).toBe(0);
  });

  it('defaults to the last 24 h in 1 h buckets', async () => {
    const { get } = await loaded();
    const { body } = await get('/v1/stats');
    expect(body).toMatchObject({ from: '2026-11-29T12:00:00.000Z', to: '2026-11-30T12:00:00.000Z', intervalMs: 3_600_000, groupBy: null });
    expect(body.buckets).toHaveLength(1);
    expect(body.buckets[0]).toMatchObject({ ts: '2026-11-30T10:00:00.000Z', turns: 6, breaks: 3 });
  });

  it('has "no data" as null, not 0', async () => {
    const { get } = await storeApp();
    const { body } = await get('/v1/stats');
    expect(body.buckets).toEqual([]);
  });

  it.each([
    ['interval=30s', 'interval: expected a whole number of minutes'],
    ['interval=90000', 'interval: expected a whole number of minutes'],
    ['groupBy=session', 'groupBy: expected one of model, provider, agentId, reason, state, got "session"'],
  ])('answers %s with 400', async (query, message) => {
    const { get } = await loaded();
    const { status, body } = await get(`/v1/stats?${query}`);
    expect(status).toBe(400);
    expect(body.error.message).toContain(message);
  });
});

describe('discovery', () => {
  it('GET /v1 lists the routes, and /v1/events/schema describes the three event types', async () => {
    const { get } = await storeApp();
    const routes = (await get('/v1')).body.routes.map((r: any) => `${r.method} ${r.path}`);
    expect(routes).toEqual(expect.arrayContaining(['POST /v1/events', 'GET /v1/breaks', 'GET /v1/stats', 'GET /metrics']));
    const schema = (await get('/v1/events/schema')).body;
    const types = JSON.stringify(schema).match(/"const":"(snapshot|usage|turn)"/g);
    expect(new Set(types)).toEqual(new Set(['"const":"snapshot"', '"const":"usage"', '"const":"turn"']));
  });

  it('answers an unknown route with 404 and a hint', async () => {
    const { get } = await storeApp();
    const { status, body } = await get('/v2/nothing');
    expect(status).toBe(404);
    expect(body.error).toMatchObject({ code: 'not_found', message: 'no route GET /v2/nothing', hint: 'GET /v1 lists the routes' });
  });
});
