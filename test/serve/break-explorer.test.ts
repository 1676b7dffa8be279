// The breaks explorer on the store under test: the store's filters on cause
// and changed tool, its order by extra cost and its pages, and the /breaks
// page in-process (rows, pages, and a 400 or 404 page in HTML for a mistake).
import { describe, expect, it } from 'vitest';
import { hashString } from '../../src/core/hash.js';
import type { BreakRecord } from '../../src/core/types.js';
import type { BreakFilters, BreakOrder, Store } from '../../src/store/store.js';
import { MINUTE, SEED_TOOLS, toWire, tools, turn, usage } from '../core/scenario.js';
import { storeApp } from './harness.js';

const LONG = 'sess_long';
const LONG_BREAKS = 29;

/** sess_long: a system block changes every turn (29 breaks, missed tokens varying); sess_A: a tool order break, then one after a 10-minute idle. */
function workload() {
  const long = Array.from({ length: LONG_BREAKS + 1 }, (_, i) =>
    turn(`l${i}`, { sessionId: LONG, at: i * 20_000, systemBlockHashes: [hashString('billing'), hashString(`v${i}`)], usage: usage(0, 10_000 + ((i * 7) % 30) * 1_000) }),
  );
  return [
    ...long,
    turn('a1', { usage: usage(0, 48_900) }),
    turn('a2', { at: 10_000, tools: tools([...SEED_TOOLS].reverse()), usage: usage(0, 48_900) }),
    turn('a3', { at: 10_000 + 10 * MINUTE, tools: tools([...SEED_TOOLS].reverse()), usage: usage(0, 48_900) }),
  ].map(toWire);
}

async function loaded() {
  const app = await storeApp();
  const events = workload();
  expect(await (await app.post({ events })).json()).toEqual({ accepted: events.length, duplicates: 0, rejected: [] });
  return app;
}

/** Every break the query finds, a page of `limit` at a time (at most 20 pages). */
async function walk(store: Store, filters: BreakFilters, order: BreakOrder, limit = 7): Promise<BreakRecord[]> {
  const found: BreakRecord[] = [];
  let cursor: string | undefined;
  for (let pages = 0; pages < 20; pages++) {
    const page = await store.breaks('default', {}, filters, { limit, ...(cursor ? { cursor } : {}) }, order);
    found.push(...page.items);
    if (page.nextCursor === null) return found;
    cursor = page.nextCursor;
  }
  throw new Error('more than 20 pages');
}

describe('breaks explorer: the store', () => {
  it('pages every break newest first, and by extra cost with each page costing no more than the one before', async () => {
    const { store } = await loaded();
    const recent = await walk(store, {}, 'recent');
    expect(recent).toHaveLength(LONG_BREAKS + 2);
    expect(recent.map((b) => b.ts)).toEqual([...recent.map((b) => b.ts)].sort((a, b) => b - a));
    const costly = await walk(store, {}, 'extra_cost');
    expect(new Set(costly.map((b) => b.requestId))).toEqual(new Set(recent.map((b) => b.requestId)));
    const costs = costly.map((b) => b.estimatedExtraCostUsd);
    expect(costs.every((c) => c !== null)).toBe(true);
    expect(costs).toEqual([...costs].sort((a, b) => b! - a!));
    // The order is by cost, not by time.
    expect(costly.map((b) => b.requestId)).not.toEqual(recent.map((b) => b.requestId));
  });

  it('filters by cause (none for breaks without one) and by a tool the break names, beside the common filters', async () => {
    const { store } = await loaded();
    const all = await walk(store, {}, 'recent');
    const expired = await walk(store, { cause: ['ttl_expired'] }, 'recent');
    expect(expired.map((b) => b.requestId)).toEqual(all.filter((b) => b.cause === 'ttl_expired').map((b) => b.requestId));
    expect(expired.map((b) => b.requestId)).toEqual(['a3']);
    const none = await walk(store, { cause: ['none'] }, 'recent');
    expect(none).toHaveLength(all.length - 1);
    expect(none.every((b) => b.cause === null)).toBe(true);
    expect((await walk(store, { cause: ['none', 'ttl_expired'] }, 'recent')).length).toBe(all.length);

    const named = await walk(store, { toolName: [SEED_TOOLS[0]!] }, 'recent');
    expect(named.map((b) => b.requestId)).toEqual(all.filter((b) => b.changedToolNames.includes(SEED_TOOLS[0]!)).map((b) => b.requestId));
    expect(named.map((b) => b.requestId)).toEqual(['a2']);
    expect(await walk(store, { toolName: ['no_such_tool'] }, 'recent')).toEqual([]);
    expect(await walk(store, { toolName: [SEED_TOOLS[0]!], sessionId: [LONG] }, 'recent')).toEqual([]);
    expect((await walk(store, { sessionId: [LONG], reason: ['system_changed'] }, 'extra_cost')).length).toBe(LONG_BREAKS);
  });
});

describe('breaks explorer: GET /breaks', () => {
  const rowIds = (text: string) => [...text.matchAll(/<tr data-request="([^"]+)"/g)].map((m) => m[1]!.replace(/&#(\d+);/g, (_, c) => String.fromCharCode(Number(c))));
  const linkOf = (text: string, rel: string) => text.match(new RegExp(`<a rel="${rel}" href="([^"]+)"`))?.[1]?.replace(/&amp;|&#38;/g, '&');

  it("pages a session's breaks 20 at a time, next and previous", async () => {
    const { app, store } = await loaded();
    const all = (await walk(store, { sessionId: [LONG] }, 'recent')).map((b) => b.requestId);
    const first = await app.request(`/breaks?range=all&sessionId=${LONG}`);
    expect(first.status).toBe(200);
    const firstText = await first.text();
    expect(rowIds(firstText)).toEqual(all.slice(0, 20));
    expect(firstText).toContain('breaks 1–20');
    expect(linkOf(firstText, 'prev')).toBeUndefined();
    const second = await (await app.request(linkOf(firstText, 'next')!)).text();
    expect(rowIds(second)).toEqual(all.slice(20));
    expect(second).toContain(`breaks 21–${LONG_BREAKS}`);
    expect(linkOf(second, 'next')).toBeUndefined();
    expect(rowIds(await (await app.request(linkOf(second, 'prev')!)).text())).toEqual(all.slice(0, 20));
  });

  it('answers a mistake with a 400 or 404 page in HTML that names it, the API still in JSON', async () => {
    const { app } = await loaded();
    for (const [query, named] of [
      ['reason=no_such_reason', 'reason: expected one of'],
      ['cause=sometimes', 'cause: expected one of'],
      ['order=name', 'order: expected one of recent, extra_cost'],
      ['modle=x', 'modle: not a filter of this page'],
      ['cursor=garbage', 'cursor: not a cursor this server issued'],
    ]) {
      const response = await app.request(`/breaks?${query}`);
      expect(response.status, query).toBe(400);
      expect(response.headers.get('content-type'), query).toContain('text/html');
      expect(await response.text(), query).toContain(named);
    }
    const missing = await app.request('/breaks/no-such-request');
    expect(missing.status).toBe(404);
    expect(missing.headers.get('content-type')).toContain('text/html');
    expect(await missing.text()).toContain('no break of request');
    const api = await app.request('/v1/breaks/no-such-request');
    expect(api.status).toBe(404);
    expect(((await api.json()) as { error: { code: string } }).error.code).toBe('not_found');
  });
});
