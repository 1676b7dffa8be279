// Token counters exported as metrics add exactly what is new, whatever the
// temporality, across re-sends, restarts of the exporter and of cachebreak.
import { describe, expect, it } from 'vitest';
import type { Store, TokenPoint } from '../../src/store/store.js';
import { T0, MINUTE } from '../core/scenario.js';
import { freshDb, openStore, storeUnderTest } from '../store-under-test.js';

const point = (over: Partial<TokenPoint>): TokenPoint => ({
  series: 'claude_code.token.usage|model=sonnet|type=input',
  source: 'claude_code',
  model: 'claude-sonnet-4-5',
  kind: 'input',
  temporality: 'cumulative',
  startMs: T0,
  timeMs: T0 + MINUTE,
  value: 0,
  ...over,
});

async function reported(store: Store) {
  const rows = await store.stats('default', { from: T0, to: T0 + 60 * MINUTE, intervalMs: 60 * MINUTE, filters: {} });
  return rows[0]?.reportedTokens ?? {};
}

describe('token counters from metrics', () => {
  it('adds cumulative growth once, restarts from the new start, ignores re-sent and stale points', async () => {
    const db = await freshDb('t');
    let store = await openStore(db);
    const send = (points: TokenPoint[]) => store.write([{ project: 'default', events: [], tokenPoints: points }]);
    await send([point({ timeMs: T0 + MINUTE, value: 100 }), point({ timeMs: T0 + 2 * MINUTE, value: 150 })]);
    await send([point({ timeMs: T0 + 2 * MINUTE, value: 150 })]); // re-sent
    await send([point({ timeMs: T0 + 90_000, value: 120 })]); // stale
    expect(await reported(store)).toEqual({ input: 150 });

    // cachebreak restarts: the series state is on disk.
    await store.close();
    store = await openStore(db);
    await send([point({ timeMs: T0 + 3 * MINUTE, value: 175 })]);
    // The exporting process restarts: a new start time, counting from zero.
    await send([point({ startMs: T0 + 4 * MINUTE, timeMs: T0 + 5 * MINUTE, value: 40 })]);
    expect(await reported(store)).toEqual({ input: 215 });

    // Delta points add their value; a re-sent window adds nothing.
    const delta = (timeMs: number, value: number) =>
      point({ series: 'gen_ai|output', kind: 'output', temporality: 'delta', startMs: timeMs - MINUTE, timeMs, value });
    await send([delta(T0 + MINUTE, 10), delta(T0 + 2 * MINUTE, 20)]);
    await send([delta(T0 + 2 * MINUTE, 20)]);
    // A file replayed from its start re-sends every window: none counts again.
    await send([delta(T0 + MINUTE, 10), delta(T0 + 2 * MINUTE, 20)]);
    expect(await reported(store)).toEqual({ input: 215, output: 30 });
  });

  it('shows them in /v1/stats buckets by model, and not when grouped by what they lack', async () => {
    const store = await storeUnderTest();
    await store.write([{ project: 'default', events: [], tokenPoints: [point({ value: 500 })] }]);
    const byModel = await store.stats('default', { from: T0, to: T0 + 60 * MINUTE, intervalMs: MINUTE, groupBy: 'model', filters: {} });
    expect(byModel).toEqual([expect.objectContaining({ ts: T0 + MINUTE, group: 'claude-sonnet-4-5', turns: 0, reportedTokens: { input: 500 } })]);
    const byAgent = await store.stats('default', { from: T0, to: T0 + 60 * MINUTE, intervalMs: MINUTE, groupBy: 'agentId', filters: {} });
    expect(byAgent).toEqual([]);
  });
});
