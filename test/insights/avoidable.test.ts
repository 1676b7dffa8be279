// Avoidable breaks on a crafted workload: which breaks count, and the dollars
// each fix would have saved, computed by hand from the price table.
import { describe, expect, it } from 'vitest';
import { avoidableBreaks, lookbackDistance } from '../../src/core/insights/avoidable.js';
import { toPrefix } from '../../src/core/prefix.js';
import { databasePrices } from '../../src/prices/index.js';
import { NOW, testApp } from '../serve/harness.js';
import { avoidableWorkload } from './workloads.js';
import { T0 } from '../core/scenario.js';

/** One break that misses 48,900 tokens on claude-sonnet-4-5: 48,900 × ($3.75 − $0.30) / 1M. */
const ONE = 0.168705;

describe('avoidable breaks', () => {
  it('prices from the table the hand figures use', () => {
    expect(databasePrices('claude-sonnet-4-5', 'anthropic')).toEqual({ input: 3, cacheRead: 0.3, cacheWrite: 3.75, cacheWrite1h: 6 });
    expect(48_900 * (3.75 - 0.3)).toBeCloseTo(ONE * 1_000_000, 6);
  });

  it('counts the reordered tools, the block that changes again and again and the breakpoint out of the lookback\'s reach; not the one edit, the marker that moves nor the TTL setting', async () => {
    const { store, get } = testApp();
    await store.write([{ project: 'default', events: avoidableWorkload() }]);
    const { status, body } = await get(`/v1/insights/avoidable?from=${T0 - 60_000}&to=${NOW}`);
    expect(status).toBe(200);
    const [tools, system, lookback] = body.fixes;
    expect(tools).toMatchObject({
      fix: 'stable_tool_order',
      reason: 'tools_order_changed',
      breaks: 1,
      missedCacheReadTokens: 48_900,
      savings: { usd: ONE, unpriced: 0 },
      examples: ['o2'],
    });
    expect(tools.involved.map((t: { name: string }) => t.name).sort()).toEqual(['mcp__filesystem__read_tree', 'mcp__github__search_issues', 'read_file', 'shell']);
    expect(system).toMatchObject({
      fix: 'volatile_block_after_breakpoint',
      breaks: 2,
      missedCacheReadTokens: 97_800,
      savings: { usd: 0.33741, unpriced: 0 },
      involved: [{ name: 'system:1', breaks: 2 }],
      examples: ['d3', 'd2'],
    });
    expect(lookback).toMatchObject({
      fix: 'breakpoint_within_lookback',
      reason: 'breakpoint_lookback_exceeded',
      breaks: 1,
      savings: { usd: ONE, unpriced: 0 },
      involved: [{ name: '25 blocks', breaks: 1 }],
      examples: ['r2'],
    });
    expect(body).toMatchObject({ breaks: 4, missedCacheReadTokens: 195_600, savings: { usd: 0.67482, unpriced: 0 } });
  });

  it('keeps to the filters and the range: one session alone, or a range with none of the breaks', async () => {
    const { store, get } = testApp();
    await store.write([{ project: 'default', events: avoidableWorkload() }]);
    const one = await get(`/v1/insights/avoidable?from=${T0 - 60_000}&to=${NOW}&sessionId=sess_date`);
    expect(one.body.fixes.map((f: { breaks: number }) => f.breaks)).toEqual([0, 2, 0]);
    const none = await get(`/v1/insights/avoidable?from=${NOW - 60_000}&to=${NOW}`);
    expect(none.body).toMatchObject({ breaks: 0, savings: { usd: 0, unpriced: 0 } });
    const bad = await get('/v1/insights/avoidable?from=yesterday');
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain('from');
  });

  it('never prices an unknown model at $0: its breaks are counted apart, and all-unpriced is no figure', () => {
    const brk = (requestId: string, cost: number | null, blocks: number[]) => ({
      requestId, ts: 0, missedCacheReadTokens: 10, estimatedExtraCostUsd: cost, changedSystemBlocks: blocks,
    });
    const none = { breaks: 0, missedCacheReadTokens: 0, extraCostMicroUsd: 0, unpricedBreaks: 0 };
    const mixed = avoidableBreaks({ toolOrder: { sums: none, tools: [], examples: [] }, system: [brk('a', 0.5, [2]), brk('b', null, [2])], lookback: [] });
    expect(mixed.fixes[1]!.savings).toEqual({ usd: 0.5, unpriced: 1 });
    const unpriced = avoidableBreaks({ toolOrder: { sums: { ...none, breaks: 3, unpricedBreaks: 3 }, tools: [], examples: [] }, system: [], lookback: [] });
    expect(unpriced.fixes[0]!.savings).toEqual({ usd: null, unpriced: 3 });
    expect(unpriced.savings).toEqual({ usd: null, unpriced: 3 });
  });

  it('says how far the next breakpoint lay, in content blocks when they are known, and nothing of prefixes not stored', () => {
    const prefix = (n: number, markers: string[], messageBlockCounts?: number[]) =>
      toPrefix({ model: 'm', messageHashes: Array.from({ length: n }, (_, i) => `m${i}`), cacheControl: { markers }, ...(messageBlockCounts ? { messageBlockCounts } : {}) });
    expect(lookbackDistance(prefix(3, ['messages:2']), prefix(5, ['messages:4'], [1, 1, 1, 13, 12]))).toBe('25 blocks');
    expect(lookbackDistance(prefix(3, ['messages:2']), prefix(40, ['messages:39']))).toBe('37 blocks');
    expect(lookbackDistance(prefix(8, ['messages:7']), prefix(10, ['messages:3']))).toBe('no later breakpoint');
    expect(lookbackDistance(null, prefix(5, ['messages:4']))).toBe('unknown');
    expect(lookbackDistance(prefix(3, ['system:0']), prefix(5, ['messages:4']))).toBe('unknown');
  });
});
