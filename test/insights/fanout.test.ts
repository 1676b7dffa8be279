// Fan-out cold starts on a crafted workload: which turns started together with
// one prefix, what they wrote again and what that cost, by hand from the price table.
import { describe, expect, it } from 'vitest';
import { TURN_STATES } from '../../src/core/types.js';
import { T0 } from '../core/scenario.js';
import { NOW, testApp } from '../serve/harness.js';
import { fanOutWorkload } from './workloads.js';

describe('fan-out cold starts', () => {
  it('finds the three subagents that started within seconds and the unpriced pair; not the late one nor another prefix', async () => {
    // The partial index turns_cold (migrations/0010) is on state 1.
    expect(TURN_STATES[1]).toBe('cold');
    const { store, get } = testApp();
    await store.write([{ project: 'default', events: fanOutWorkload() }]);
    const { status, body } = await get(`/v1/insights/fanout?from=${T0 - 60_000}&to=${NOW}`);
    expect(status).toBe(200);
    expect(body.fanOuts).toEqual([
      { model: 'claude-sonnet-4-5', ts: T0, turns: 3, sessions: 1, requestIds: ['fa', 'fb', 'fc'], writtenOnceTokens: 48_900, writtenAgainTokens: 97_800, cost: { usd: 0.33741, unpriced: 0 } },
      { model: 'house-model-7', ts: T0, turns: 2, sessions: 1, requestIds: ['h1', 'h2'], writtenOnceTokens: 2_000, writtenAgainTokens: 2_000, cost: { usd: null, unpriced: 1 } },
    ]);
    expect(body).toMatchObject({ fanOutCount: 2, writtenAgainTokens: 99_800, cost: { usd: 0.33741, unpriced: 1 } });
    expect(body.advice).toMatch(/release the others when its first token arrives/);
  });

  it('keeps to the limit, the agent filter and the range', async () => {
    const { store, get } = testApp();
    await store.write([{ project: 'default', events: fanOutWorkload() }]);
    const one = await get(`/v1/insights/fanout?from=${T0 - 60_000}&to=${NOW}&limit=1`);
    expect(one.body.fanOuts).toHaveLength(1);
    expect(one.body.fanOutCount).toBe(2);
    const two = await get(`/v1/insights/fanout?from=${T0 - 60_000}&to=${NOW}&agentId=a,b&sessionId=sess_fan`);
    expect(two.body.fanOuts.map((f: { requestIds: string[] }) => f.requestIds)).toEqual([['fa', 'fb']]);
    const late = await get(`/v1/insights/fanout?from=${T0 + 3_000}&to=${NOW}`);
    expect(late.body.fanOutCount).toBe(0);
  });
});
