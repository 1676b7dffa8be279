// Volatile prefix parts on a crafted workload: which blocks and tools changed,
// where, and the re-write cost their breaks caused, by hand from the price table.
import { describe, expect, it } from 'vitest';
import { T0 } from '../core/scenario.js';
import { NOW, testApp } from '../serve/harness.js';
import { volatileWorkload } from './workloads.js';

describe('volatile prefix parts', () => {
  it('ranks the tool and the block that changed twice above the block changed once; tools that only moved are not volatile', async () => {
    const { store, get } = testApp();
    await store.write([{ project: 'default', events: volatileWorkload() }]);
    const { status, body } = await get(`/v1/insights/volatile?from=${T0 - 60_000}&to=${NOW}`);
    expect(status).toBe(200);
    expect(body.parts).toEqual([
      { kind: 'tool', name: 'shell', breaks: 2, sessions: 1, days: 1, missedCacheReadTokens: 97_800, cost: { usd: 0.33741, unpriced: 0 }, latestRequestId: 'k3' },
      { kind: 'system_block', name: 'system:1', breaks: 2, sessions: 1, days: 1, missedCacheReadTokens: 97_800, cost: { usd: 0.33741, unpriced: 0 }, latestRequestId: 'd3' },
      { kind: 'system_block', name: 'system:0', breaks: 1, sessions: 1, days: 1, missedCacheReadTokens: 48_900, cost: { usd: 0.168705, unpriced: 0 }, latestRequestId: 'e2' },
    ]);
    const top = await get(`/v1/insights/volatile?from=${T0 - 60_000}&to=${NOW}&limit=1`);
    expect(top.body.parts.map((p: { name: string }) => p.name)).toEqual(['shell']);
    expect((await get('/v1/insights/volatile?limit=0')).status).toBe(400);
  });
});
