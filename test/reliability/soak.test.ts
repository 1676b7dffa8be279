import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers.js';
import { soak } from './soak.js';

describe('soak (one minute; `npm run soak -- --minutes 10` for the full figure)', () => {
  it('keeps ingesting and answering dashboards with memory that stops growing', { timeout: 120_000 }, async () => {
    // 1,000 events/s keeps the database (and SQLite's page cache) small in a
    // minute, so growth after warm-up measures the server, not cache fill.
    const report = await soak({ dir: tempDir(), minutes: 1, rate: 1_000 });
    expect(report.turnsPerSecond).toBeGreaterThan(900);
    expect(report.dashboardRequests).toBeGreaterThan(1_000);
    expect(report.ingestP99Ms).toBeLessThan(1_000);
    expect(report.dashboardP95Ms).toBeLessThan(500);
    expect(report.growthAfterWarmup).toBeLessThanOrEqual(0.1);
  });
});
