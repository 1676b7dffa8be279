// TTL advice on a crafted workload: the gaps by tier, and what the other tier
// would have saved or cost, computed by hand from the price table.
import { describe, expect, it } from 'vitest';
import { oneHourSaves } from '../../src/core/insights/ttl.js';
import { databasePrices } from '../../src/prices/index.js';
import { T0 } from '../core/scenario.js';
import { NOW, testApp } from '../serve/harness.js';
import { ttlWorkload } from './workloads.js';

const SONNET = { input: 3, cacheRead: 0.3, cacheWrite: 3.75, cacheWrite1h: 6 };

describe('TTL advice', () => {
  it('prices from the table the hand figures use; the saving formula on them', () => {
    expect(databasePrices('claude-sonnet-4-5', 'anthropic')).toEqual(SONNET);
    expect(databasePrices('house-model-7', 'anthropic')).toBeUndefined();
    // 49,900 × (3.75 − 0.30) − (101,000 − 49,900) × (6 − 3.75), in micro-dollars.
    expect(oneHourSaves(SONNET, 49_900, 49_900, 101_000)).toBe(0.05718);
    expect(oneHourSaves(SONNET, 0, 0, 50_900)).toBe(-0.114525);
  });

  it('advises 1 h for the stream that came back after 20 minutes, 5 m for the one that paid 1 h without gaps, and prices neither unknown model', async () => {
    const { store, get } = testApp();
    await store.write([{ project: 'default', events: ttlWorkload() }]);
    const { status, body } = await get(`/v1/insights/ttl?from=${T0 - 60_000}&to=${NOW}`);
    expect(status).toBe(200);
    expect(body.groups).toEqual([
      {
        sessionId: 'sess_long', agentId: 'reviewer', model: 'claude-sonnet-4-5', provider: 'anthropic',
        gaps: { first: 1, within_5m: 2, within_1h: 0, over_1h: 0 },
        currentTier: '1h', advisedTier: '5m', stakeTokens: 0, writtenTokens: 50_900, oneHourSavesUsd: -0.114525, adviceSavesUsd: 0.114525,
      },
      {
        sessionId: 'sess_short', agentId: 'main', model: 'claude-sonnet-4-5', provider: 'anthropic',
        gaps: { first: 1, within_5m: 2, within_1h: 1, over_1h: 0 },
        currentTier: '5m', advisedTier: '1h', stakeTokens: 49_900, writtenTokens: 101_000, oneHourSavesUsd: 0.05718, adviceSavesUsd: 0.05718,
      },
      {
        sessionId: 'sess_unpriced', agentId: 'main', model: 'house-model-7', provider: 'anthropic',
        gaps: { first: 1, within_5m: 0, within_1h: 0, over_1h: 0 },
        currentTier: '5m', advisedTier: '5m', stakeTokens: 0, writtenTokens: 2_000, oneHourSavesUsd: null, adviceSavesUsd: null,
      },
    ]);
    expect(body.adviceSavesUsd).toBe(0.171705);
    expect(body.groupCount).toBe(3);
    // A shorter list, the totals still over every group.
    const top = await get(`/v1/insights/ttl?from=${T0 - 60_000}&to=${NOW}&limit=1`);
    expect(top.body).toMatchObject({ groupCount: 3, changeCount: 2, adviceSavesUsd: 0.171705, unpricedGroups: 1 });
    expect(top.body.groups.map((g: { sessionId: string }) => g.sessionId)).toEqual(['sess_long']);
    expect(body.unpricedGroups).toBe(1);
  });

  it('keeps to the agent filter, one row per stream, and reads the range in whole hours (the rollup is kept per hour)', async () => {
    const { store, get } = testApp();
    await store.write([{ project: 'default', events: ttlWorkload() }]);
    const reviewer = await get(`/v1/insights/ttl?from=${T0 - 60_000}&to=${NOW}&agentId=reviewer`);
    expect(reviewer.body.groups.map((g: { sessionId: string; agentId: string }) => [g.sessionId, g.agentId])).toEqual([['sess_long', 'reviewer']]);
    // From 10:21 the range still takes the whole 10:00 hour, with s3's gap measured from s2.
    const late = await get(`/v1/insights/ttl?from=${T0 + 21 * 60_000}&to=${NOW}&sessionId=sess_short`);
    expect(late.body.groups).toHaveLength(1);
    expect(late.body.groups[0].gaps).toEqual({ first: 1, within_5m: 2, within_1h: 1, over_1h: 0 });
    const after = await get(`/v1/insights/ttl?from=${T0 + 3_600_000}&to=${NOW}`);
    expect(after.body).toEqual({ groups: [], groupCount: 0, changeCount: 0, adviceSavesUsd: 0, unpricedGroups: 0 });
  });
});
