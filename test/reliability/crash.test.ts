import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers.js';
import { crashTrials } from './crash.js';

describe('crash safety', () => {
  it('kill -9 during continuous ingest loses nothing acknowledged and corrupts nothing', { timeout: 120_000 }, async () => {
    // CI runs a few trials; `npm run crash` runs the full twenty.
    const results = await crashTrials(tempDir(), 4, 20261130);
    expect(results).toHaveLength(4);
    // The trials really ingested and really stored: a kill that came before any answer proves nothing.
    expect(results.reduce((n, r) => n + r.acknowledged, 0)).toBeGreaterThan(0);
    for (const r of results) expect(r.stored).toBeGreaterThanOrEqual(r.acknowledged);
  });
});
