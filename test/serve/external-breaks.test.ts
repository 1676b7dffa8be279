// Harness-reported breaks: stored once (the same report again is a
// duplicate), listed newest first with the filters and pages of /v1/breaks,
// and accepted over POST as `tail --server` sends them. Tail checkpoints are
// written in the transaction of the events they cover: a failed write keeps
// neither.
import { describe, expect, it } from 'vitest';
import type { ExternalBreak, TailCheckpoint } from '../../src/store/store.js';
import { freshDb, openStore, refuseTurns, storeUnderTest } from '../store-under-test.js';
import { storeApp } from './harness.js';

const T = Date.parse('2026-11-30T10:00:00.000Z');

function report(i: number, sessionId = 'sess-1', agentId = 'main'): ExternalBreak {
  return {
    harness: 'claude-code',
    sessionId,
    agentId,
    source: agentId === 'main' ? 'repl_main_thread' : agentId,
    ts: T + i * 60_000,
    reason: `tools changed (+${i}/-0 tools)`,
    callNumber: i + 2,
    previousCacheReadTokens: 48_000,
    currentCacheReadTokens: 0,
    cacheCreationTokens: 48_900,
    diffPath: null,
    file: `/home/u/.claude/debug/${sessionId}.txt`,
    line: 10 * i,
  };
}

const checkpoint = (offset: number): TailCheckpoint => ({ fileId: '64:12', path: '/logs/a.ndjson', offset, resumeAt: offset, resumeLine: 3, headLength: 10, headHash: 'abc' });

describe('the store', () => {
  it('stores each report once and lists them newest first, filtered and paged', async () => {
    const store = await storeUnderTest();
    const first = await store.write([{ project: 'default', events: [], externalBreaks: [report(0), report(1), report(2, 'sess-2', 'agent:builtin:explore')] }]);
    expect(first.counts).toEqual([{ accepted: 0, duplicates: 0, externalBreaks: 3 }]);
    expect(first.externalBreaks!.map((e) => e.record.callNumber)).toEqual([2, 3, 4]);
    const again = await store.write([{ project: 'default', events: [], externalBreaks: [report(1), report(3)] }]);
    expect(again.counts).toEqual([{ accepted: 0, duplicates: 0, externalBreaks: 1 }]);
    expect(again.externalBreaks!.map((e) => e.record.callNumber)).toEqual([5]);

    const page1 = await store.externalBreaks('default', {}, {}, { limit: 3 });
    expect(page1.items.map((b) => b.callNumber)).toEqual([5, 4, 3]);
    const page2 = await store.externalBreaks('default', {}, {}, { limit: 3, cursor: page1.nextCursor! });
    expect(page2).toEqual({ items: [report(0)], nextCursor: null });
    expect((await store.externalBreaks('default', {}, { sessionId: ['sess-2'] }, { limit: 10 })).items).toEqual([report(2, 'sess-2', 'agent:builtin:explore')]);
    expect((await store.externalBreaks('default', { from: T + 60_000, to: T + 120_001 }, { agentId: ['main'] }, { limit: 10 })).items.map((b) => b.callNumber)).toEqual([3]);
    expect((await store.externalBreaks('other', {}, {}, { limit: 10 })).items).toEqual([]);
  });

  it('writes a tail checkpoint only with the events it covers', async () => {
    const db = await freshDb('checkpoint');
    const store = await openStore(db);
    await store.write([{ project: 'default', events: [], checkpoint: checkpoint(100) }]);
    expect(await store.tailCheckpoints('default')).toEqual([checkpoint(100)]);
    // A write that fails inside its transaction: the checkpoint stays where the stored data is.
    await refuseTurns(db, 'boom', 'refused');
    const boom = { type: 'usage' as const, requestId: 'boom', sessionId: 's', provider: 'anthropic', usage: { uncached: 1, read: 0, write: 0, write1h: 0, output: 1, cacheReported: true, writeReported: true } };
    await expect(store.write([{ project: 'default', events: [boom], externalBreaks: [report(7)], checkpoint: checkpoint(200) }])).rejects.toThrow(/refused/);
    expect(await store.tailCheckpoints('default')).toEqual([checkpoint(100)]);
    expect((await store.externalBreaks('default', {}, {}, { limit: 10 })).items).toEqual([]);
    await store.forgetTailCheckpoints('default', ['64:12']);
    expect(await store.tailCheckpoints('default')).toEqual([]);
  });
});

describe('/v1/breaks/external', () => {
  it('POST stores what is valid, rejects the rest by index and field, and counts reports seen before as duplicates', async () => {
    const { app, get, logLines } = await storeApp();
    const send = (breaks: unknown[]) =>
      app.request('/v1/breaks/external', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ breaks }) });
    const wire = (b: ExternalBreak) => ({ ...b, ts: new Date(b.ts).toISOString() });
    let response = await send([wire(report(0)), { ...wire(report(1)), ts: 'yesterday' }, { harness: 'claude-code' }]);
    expect(response.status).toBe(200);
    const body = (await response.json()) as { accepted: number; duplicates: number; rejected: { index: number; field: string }[] };
    expect(body).toMatchObject({ accepted: 1, duplicates: 0 });
    expect(body.rejected.map((r) => [r.index, r.field])).toEqual([
      [1, 'ts'],
      [2, 'sessionId'],
    ]);
    response = await send([report(0), report(1)]);
    expect(await response.json()).toEqual({ accepted: 1, duplicates: 1, rejected: [] });
    expect(logLines.filter((l) => l.includes('event=harness_prompt_cache_break'))).toHaveLength(2);

    const listed = await get('/v1/breaks/external?limit=1');
    expect(listed.status).toBe(200);
    // No break of cachebreak's to join: joined is null.
    expect(listed.body.breaks).toEqual([{ ...wire(report(1)), joined: null }]);
    const next = await get(`/v1/breaks/external?limit=1&cursor=${listed.body.nextCursor}`);
    expect(next.body).toEqual({ breaks: [{ ...wire(report(0)), joined: null }], nextCursor: null });
    expect((await get('/v1/breaks/external?sessionId=nobody')).body).toEqual({ breaks: [], nextCursor: null });
    expect((await get('/v1/breaks/external?limit=0')).status).toBe(400);
    expect((await get('/v1/breaks/external?from=later')).status).toBe(400);
  });

  it('POST rejects a report with a NUL byte in any text field, by index and field, on both stores alike', async () => {
    const { app, get } = await storeApp();
    const wire = (b: ExternalBreak) => ({ ...b, ts: new Date(b.ts).toISOString() });
    const fields = ['harness', 'sessionId', 'agentId', 'source', 'reason', 'diffPath', 'file'] as const;
    const breaks = [...fields.map((field, i) => ({ ...wire(report(i)), [field]: 'x\0' })), wire(report(fields.length))];
    const response = await app.request('/v1/breaks/external', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ breaks }) });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      accepted: 1,
      duplicates: 0,
      rejected: fields.map((field, index) => ({ index, field, error: `breaks[${index}].${field}: contains a NUL byte (\\u0000), which no stored value holds; remove it` })),
    });
    expect((await get('/v1/breaks/external')).body.breaks).toEqual([{ ...wire(report(fields.length)), joined: null }]);
  });

  it('POST refuses a body that is not {"breaks": [...]}', async () => {
    const { app } = await storeApp();
    const post = (body: string, type = 'application/json') => app.request('/v1/breaks/external', { method: 'POST', headers: { 'content-type': type }, body });
    expect((await post('{"events": []}')).status).toBe(400);
    expect((await post('not json')).status).toBe(400);
    expect((await post('{"breaks": []}', 'text/plain')).status).toBe(415);
  });
});
