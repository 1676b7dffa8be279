// Agreement as confusion tables on a crafted workload: cachebreak's verdict
// against the provider's diagnosis and the harness's report, the cells that
// disagree naming their breaks.
import { describe, expect, it } from 'vitest';
import { T0 } from '../core/scenario.js';
import { NOW, testApp } from '../serve/harness.js';
import { agreementWorkload } from './workloads.js';

describe('agreement confusion tables', () => {
  it('tables each side against cachebreak, the disagreeing breaks named', async () => {
    const { store, get } = testApp();
    const { events, externalBreaks } = agreementWorkload();
    await store.write([{ project: 'default', events, externalBreaks }]);
    const { status, body } = await get(`/v1/insights/agreement?from=${T0 - 60_000}&to=${NOW}`);
    expect(status).toBe(200);
    expect(body.harness).toEqual([
      // m2 only moved a marker, which is not part of the cache key: nothing changed, whatever the harness thought.
      { cachebreak: 'no_change', other: 'system_changed', breaks: 1, agrees: false, disagreeing: ['m2'] },
      { cachebreak: 'tools_changed', other: 'tools_changed', breaks: 1, agrees: true, disagreeing: [] },
    ]);
    expect(body.provider).toEqual([
      { cachebreak: 'system_changed', other: 'messages_rewritten', breaks: 1, agrees: false, disagreeing: ['d3'] },
      { cachebreak: 'system_changed', other: 'system_changed', breaks: 1, agrees: true, disagreeing: [] },
      { cachebreak: 'tools_changed', other: 'tools_changed', breaks: 1, agrees: true, disagreeing: [] },
    ]);
    // The same breaks as the agreement rates count.
    const rates = await get(`/v1/breaks/agreement?from=${T0 - 60_000}&to=${NOW}`);
    expect(rates.body).toMatchObject({ harness: { compared: 2, agreed: 1 }, provider: { compared: 3, agreed: 2 } });
    // A disagreeing break is one request away.
    expect((await get('/v1/breaks/d3')).body.break.reason).toBe('system_changed');
  });
});
