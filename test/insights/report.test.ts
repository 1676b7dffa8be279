// `cachebreak report`'s insights section on crafted workloads: the figures
// the insight tests compute by hand, as the terminal shows them.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SERVICE_DETECTION } from '../../src/prices/index.js';
import { SqliteStore } from '../../src/store/sqlite/store.js';
import type { Report } from '../../src/cli/report-data.js';
import type { CacheEvent } from '../../src/core/types.js';
import { cli } from '../cli/run.js';
import { tempDir } from '../helpers.js';
import { avoidableWorkload, chronicWorkload, fanOutWorkload, ttlWorkload } from './workloads.js';

describe('cachebreak report: what to change', () => {
  it('shows each insight with its dollar figure, an unknown price never as $0.00', async () => {
    const db = join(tempDir(), 'insights.db');
    const store = new SqliteStore(db, SERVICE_DETECTION);
    // Each workload an hour after the one before, under its own names: their first turns do not fan out together.
    const apart = (events: CacheEvent[], hours: number, tag: string) =>
      events.map((e) => ({ ...e, requestId: `${tag}-${e.requestId}`, sessionId: `${tag}-${e.sessionId}`, ts: e.ts! + hours * 3_600_000, ...(e.type === 'turn' ? { endTs: e.endTs! + hours * 3_600_000 } : {}) }) as CacheEvent);
    await store.write([
      { project: 'default', events: avoidableWorkload() },
      { project: 'default', events: apart(ttlWorkload(), 2, 'ttl') },
      { project: 'default', events: apart(fanOutWorkload(), 4, 'fan') },
      { project: 'default', events: apart(chronicWorkload(), 6, 'chr') },
    ]);
    await store.close();
    const { code, stdout } = await cli(['report', '--db', db]);
    expect(code).toBe(0);
    const section = stdout.slice(stdout.indexOf('What to change'));
    // Avoidable: o2, d2, d3, r2, and with sess_clock's four clock changes system:0 changes five times
    // in the project, so sess_edit's change there counts too: 9 breaks × $0.168705; and chr-sess_lookback's
    // four breaks, each 30 blocks past the last breakpoint: 4 × 40,000 × ($3.75 − $0.30) / 1M = $0.552.
    expect(section).toMatch(/^ {2}stable_tool_order +1 break +\$0\.17 /m);
    expect(section).toMatch(/^ {2}breakpoint_within_lookback +5 breaks +\$0\.72 +30 blocks, 25 blocks$/m);
    expect(section).toMatch(/^ {2}chr-sess_clock main +leading_volatile_block +0\.0% cached +245,100 not read$/m);
    // TTL: the sess_short stream would have saved $0.05718 at 1 h; sess_long's 1 h cost $0.114525.
    expect(section).toMatch(/^ {2}ttl-sess_long reviewer +claude-sonnet-4-5 +2 ≤5m, 0 ≤1h, 0 >1h +1h → 5m +1h costs \$0\.11$/m);
    expect(section).toMatch(/^ {2}ttl-sess_short main +claude-sonnet-4-5 +2 ≤5m, 1 ≤1h, 0 >1h +5m → 1h +1h saves \$0\.06$/m);
    const json = JSON.parse((await cli(['report', '--db', db, '--json'])).stdout) as Report;
    // house-model-7 writes in ttl-sess_unpriced and in both of fan-sess_house's agents.
    expect(json.insights.ttl.unpricedGroups).toBe(3);
    expect(json.insights.avoidable.savings).toEqual({ usd: 2.070345, unpriced: 0 });
    // Fan-out: sess_fan's 97,800 written again for $0.33741, and the unpriced pair counted apart (the other
    // workloads' sessions, starting side by side with one prefix, fan out too).
    expect(section).toMatch(/^ {2}2026-11-30T14:00:00\.000Z +claude-sonnet-4-5 +3 requests +97,800 again +\$0\.34$/m);
    expect(section).toMatch(/^ {2}2026-11-30T14:00:00\.000Z +house-model-7 +2 requests +2,000 again +unknown \(1 unpriced\)$/m);
    expect(section).not.toMatch(/\$0\.00\b/);
  });
});
