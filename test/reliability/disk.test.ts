// When the disk is full or the database read-only, ingest answers 503 with
// Retry-After and a clear message, acknowledges nothing it did not store, and
// recovers by itself when space (or write access) returns. Nothing is corrupted.
import { describe, expect, it } from 'vitest';
import { toWire, turn, usage } from '../core/scenario.js';
import { testApp } from '../serve/harness.js';

const batch = (from: number, size: number) =>
  ({ events: Array.from({ length: size }, (_, i) => toWire(turn(`r${from + i}`, { sessionId: `s${(from + i) % 7}`, at: (from + i) * 1_000, usage: usage(0, 5_000) }))) });

async function turnCount(get: ReturnType<typeof testApp>['get']): Promise<number> {
  const { body } = await get('/v1/sessions?limit=1000');
  return body.sessions.reduce((n: number, s: { turns: number }) => n + s.turns, 0);
}

describe('disk full and read-only database', () => {
  it('answers 503 while the disk is full, stores nothing partial, and recovers when space returns', async () => {
    const { store, post, get } = testApp();
    expect((await post(batch(0, 200))).status).toBe(200);
    const pages = store.sqlite.pragma('page_count', { simple: true }) as number;
    // "Full": the file may not grow past its current size.
    store.sqlite.pragma(`max_page_count = ${pages}`);
    let full: Response | undefined;
    for (let i = 1; i <= 50 && !full; i++) {
      const response = await post(batch(i * 200, 200));
      if (response.status !== 200) full = response;
    }
    expect(full?.status).toBe(503);
    expect(full!.headers.get('retry-after')).toBe('5');
    const error = ((await full!.json()) as any).error;
    expect(error.code).toBe('unavailable');
    expect(error.message).toMatch(/^the database cannot take writes right now \(SQLITE_FULL\); nothing from this request was stored$/);
    expect(error.hint).toContain('free disk space');
    const stored = await turnCount(get);
    expect(stored % 200).toBe(0); // whole requests only

    store.sqlite.pragma('max_page_count = 1073741823');
    expect((await post(batch(100_000, 200))).status).toBe(200);
    expect(await turnCount(get)).toBe(stored + 200);
    expect(store.sqlite.pragma('integrity_check', { simple: true })).toBe('ok');
  });

  it('answers 503 while the database is read-only, and recovers when it is writable again', async () => {
    const { store, post, get } = testApp();
    expect((await post(batch(0, 10))).status).toBe(200);
    store.sqlite.pragma('query_only = 1');
    const refused = await post(batch(10, 10));
    expect(refused.status).toBe(503);
    expect(((await refused.json()) as any).error.message).toContain('(SQLITE_READONLY)');
    // Reads still work.
    expect(await turnCount(get)).toBe(10);
    store.sqlite.pragma('query_only = 0');
    expect((await post(batch(10, 10))).status).toBe(200);
    expect(await turnCount(get)).toBe(20);
  });
});
