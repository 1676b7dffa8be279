// Reader threads answer the read routes exactly as the main thread would:
// the same status, type and body for every documented read, good or bad.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { demoWorkload } from '../../src/cli/demo/workload.js';
import { priceLookup, SERVICE_DETECTION } from '../../src/prices/index.js';
import { startReaders } from '../../src/serve/readers/pool.js';
import { startServer } from '../../src/server.js';
import { SqliteStore } from '../../src/store/sqlite/store.js';
import { tempDir } from '../helpers.js';

const DAY = 86_400_000;

type Read = { path: string; json?: unknown };

function reads(from: number, to: number): Read[] {
  const range = `from=${from}&to=${to}`;
  const simpodRange = { from: new Date(from).toISOString(), to: new Date(to).toISOString() };
  return [
    { path: '/v1/breaks?limit=5' },
    { path: '/v1/breaks?reason=tools_order_changed' },
    { path: '/v1/breaks?limit=nope' },
    { path: '/v1/sessions' },
    { path: '/v1/sessions/no-such-session/turns' },
    { path: `/v1/stats?${range}&interval=1h&groupBy=reason` },
    { path: `/grafana/cache-rate?${range}&groupBy=model&model=claude-sonnet-4-5&model=qwen3-coder-plus` },
    { path: `/grafana/breaks?${range}` },
    { path: `/grafana/annotations?${range}` },
    { path: `/grafana/turns?${range}` }, // no sessionId: 400
    { path: '/grafana/json/query', json: { range: simpodRange, intervalMs: 3_600_000, targets: [{ refId: 'A', target: 'breaks-over-time', payload: {} }] } },
    { path: '/grafana/json/variable', json: { payload: { target: 'model' }, range: simpodRange } },
    { path: '/grafana/json/variable', json: 'not an object' },
    // Priced by the configured overrides in both.
    { path: `/v1/insights/ttl?${range}` },
    { path: `/grafana/insights-fanout?${range}` },
  ];
}

/** Sonnet at ten times its list price: the insights' dollars show which prices a thread used. */
const OVERRIDES = { 'claude-sonnet-4-5': { input: 30, cacheRead: 3, cacheWrite: 37.5, cacheWrite1h: 60 } };

async function answers(db: string, readWorkers: number, list: Read[]) {
  const server = await startServer(
    {
      host: '127.0.0.1', port: 0, db, bodyLimit: 1 << 20, detection: { ...SERVICE_DETECTION, prices: priceLookup(OVERRIDES) }, priceOverrides: OVERRIDES,
      synchronous: 'normal', project: 'default', readWorkers,
    },
    () => {},
  );
  try {
    const out = [];
    for (const read of list) {
      const response = await fetch(`${server.url}${read.path}`, {
        method: read.json === undefined ? 'GET' : 'POST',
        ...(read.json === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(read.json) }),
      });
      const body = JSON.parse(await response.text()) as unknown;
      // Error replies carry the request's own id.
      if (typeof body === 'object' && body !== null && 'error' in body) delete (body as { error: { requestId?: string; hint?: string } }).error.requestId;
      out.push({ path: read.path, status: response.status, type: response.headers.get('content-type'), body });
    }
    return out;
  } finally {
    await server.close();
  }
}

describe('reader threads', () => {
  it('answer every kind of read exactly as the main thread does', { timeout: 60_000 }, async () => {
    const db = join(tempDir(), 'readers.db');
    const now = Date.now();
    const store = new SqliteStore(db, SERVICE_DETECTION);
    await store.write([{ project: 'default', events: demoWorkload({ seed: 3, now }) }]);
    await store.close();

    const list = reads(now - DAY, now);
    const main = await answers(db, 0, list);
    const threads = await answers(db, 2, list);
    expect(threads).toEqual(main);
    // The comparison covers data, empty answers and errors alike.
    expect(main.map((a) => a.status)).toEqual([200, 200, 400, 200, 404, 200, 200, 200, 200, 400, 200, 200, 400, 200, 200]);
    // The overrides, not the price database: a fan-out of Sonnet subagents costs ten times its list price.
    const sonnet = (main[14]!.body as { model: string; costUsd: number; writtenAgainTokens: number }[]).find((f) => f.model === 'claude-sonnet-4-5');
    expect(Math.abs(sonnet!.costUsd - (sonnet!.writtenAgainTokens * (37.5 - 3)) / 1_000_000)).toBeLessThanOrEqual(1e-6);
    expect(JSON.stringify(main[7]!.body)).toContain('changedToolNames');
  });

  it('refuse to start, with the reason, when a thread cannot open the database', async () => {
    const missing = join(tempDir(), 'missing.db');
    await expect(startReaders({ path: missing, queryBodyLimit: 1024, priceOverrides: {} }, 1, () => {})).rejects.toThrow('SQLITE_CANTOPEN');
  });
});
