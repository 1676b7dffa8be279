import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers.js';
import { DASHBOARD_FILES, soak } from './soak.js';

describe('soak (one minute; `npm run soak -- --minutes 10` for the full figure)', () => {
  it('keeps ingesting and refreshing the four dashboards every second, with memory that stops growing', { timeout: 120_000 }, async () => {
    // 1,000 events/s keeps the database small in a minute; what SQLite's page
    // caches hold of its growth is allowed for (soak.ts), the rest is the server's.
    const report = await soak({ dir: tempDir(), minutes: 1, rate: 1_000 });
    expect(report.turnsPerSecond).toBeGreaterThan(900);
    expect(report.ingestP99Ms).toBeLessThan(1_000);
    // Every query of every dashboard answered 200 with rows, and every scrape held what the Prometheus dashboard reads.
    expect(report.dashboardErrors).toEqual([]);
    expect(report.dashboardErrorCount).toBe(0);
    expect(report.incompleteScrapes).toBe(0);
    expect(report.dashboards.map((d) => d.file)).toEqual([...DASHBOARD_FILES]);
    for (const d of report.dashboards) {
      // Refreshed about every second for the whole minute: a refresh (variables, then every panel) fits in its second.
      expect(d.refreshes, d.file).toBeGreaterThanOrEqual(45);
      expect(d.refreshP95Ms, d.file).toBeLessThan(1_000);
    }
    // The Infinity dashboards ask for 36 URLs a refresh, Prometheus one scrape.
    expect(report.dashboardRequests).toBeGreaterThan(1_600);
    expect(report.dashboardP95Ms).toBeLessThan(500);
    expect(report.growthAfterWarmup).toBeLessThanOrEqual(0.1);
  });
});
