// A full disk fails every write until space returns: the log says so once
// (then once a minute, with how many it left out), instead of one error line
// per refused request, on a disk that has no room for them.
import { describe, expect, it } from 'vitest';
import { LogThrottle } from '../../src/telemetry/throttle.js';
import { toWire, turn, usage } from '../core/scenario.js';
import { testApp } from '../serve/harness.js';

const batch = (from: number, size: number) => ({
  events: Array.from({ length: size }, (_, i) => toWire(turn(`r${from + i}`, { sessionId: `s${(from + i) % 5}`, at: (from + i) * 1_000, usage: usage(0, 5_000) }))),
});

describe('disk full in the log', () => {
  it('writes one store_unavailable line for a run of refused writes, not one per request', async () => {
    const app = testApp();
    expect((await app.post(batch(0, 50))).status).toBe(200);
    const pages = app.store.sqlite.pragma('page_count', { simple: true }) as number;
    app.store.sqlite.pragma(`max_page_count = ${pages}`);
    const statuses: number[] = [];
    for (let i = 1; i <= 30; i++) statuses.push((await app.post(batch(i * 50, 50))).status);
    expect(statuses.filter((s) => s === 503).length).toBeGreaterThanOrEqual(25);
    const lines = app.logLines.filter((l) => l.includes('event=store_unavailable'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('code=SQLITE_FULL');
  });

  it('lets a repeated line through once per interval, with the count left out', () => {
    let now = 0;
    const throttle = new LogThrottle(60_000, () => now);
    expect(throttle.admit('SQLITE_FULL')).toBe(0);
    for (let i = 0; i < 500; i++) expect(throttle.admit('SQLITE_FULL')).toBeUndefined();
    // Another kind is not held back by the first.
    expect(throttle.admit('SQLITE_BUSY')).toBe(0);
    now += 60_000;
    expect(throttle.admit('SQLITE_FULL')).toBe(500);
    expect(throttle.admit('SQLITE_FULL')).toBeUndefined();
  });
});
