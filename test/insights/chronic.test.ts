// Chronic misses on a crafted workload: which streams, in which order, and the
// cause each one's snapshots show.
import { describe, expect, it } from 'vitest';
import { T0 } from '../core/scenario.js';
import { NOW, testApp } from '../serve/harness.js';
import { chronicWorkload } from './workloads.js';

describe('chronic misses', () => {
  it('finds the four streams that rarely read, most input not read first, each with its cause', async () => {
    const { store, get } = testApp();
    await store.write([{ project: 'default', events: chronicWorkload() }]);
    const { status, body } = await get(`/v1/insights/chronic?from=${T0 - 60_000}&to=${NOW}`);
    expect(status).toBe(200);
    expect(body.streams.map((s: { sessionId: string; cause: string; unreadTokens: number }) => [s.sessionId, s.cause, s.unreadTokens])).toEqual([
      ['sess_clock', 'leading_volatile_block', 245_100],
      ['sess_lookback', 'lookback_exceeded', 200_600],
      ['sess_nomarker', 'no_breakpoint', 100_600],
      ['sess_tiny', 'below_minimum', 1_500],
    ]);
    expect(body.streams[0]).toMatchObject({ agentId: 'main', turns: 5, measuredTurns: 5, cacheRate: 0, readTokens: 0, writtenTokens: 244_500, breaks: 4, breakCost: { usd: 0.67482, unpriced: 0 } });
    expect(body.streams[0].advice).toMatch(/first block changes/);
  });

  it('keeps to the limit and the session filter', async () => {
    const { store, get } = testApp();
    await store.write([{ project: 'default', events: chronicWorkload() }]);
    const one = await get(`/v1/insights/chronic?from=${T0 - 60_000}&to=${NOW}&limit=1`);
    expect(one.body.streams.map((s: { sessionId: string }) => s.sessionId)).toEqual(['sess_clock']);
    const healthy = await get(`/v1/insights/chronic?from=${T0 - 60_000}&to=${NOW}&sessionId=sess_healthy`);
    expect(healthy.body.streams).toEqual([]);
  });
});
