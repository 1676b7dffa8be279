import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers.js';
import { crashTrials } from './crash.js';

describe('crash safety', () => {
  it('kill -9 during continuous ingest over HTTP, OTLP/HTTP and OTLP/gRPC loses nothing acknowledged and corrupts nothing', { timeout: 120_000 }, async () => {
    // CI runs a few trials; `npm run crash` runs the full twenty. Each trial throws on a lost
    // acknowledged turn, a failed integrity_check, or a stored state or break record that differs
    // from the in-order evaluation.
    const results = await crashTrials(tempDir(), 4, 20261130);
    expect(results).toHaveLength(4);
    // The trials really ingested through every transport, and really judged breaks: a kill that
    // came before any answer, or a transport that never got through, proves nothing.
    for (const transport of ['http', 'otlp-http-protobuf', 'otlp-grpc'] as const) {
      expect(results.reduce((n, r) => n + r.acknowledged[transport], 0), transport).toBeGreaterThan(0);
    }
    // Breaks among the turns of each transport were compared field by field.
    for (const [transport, breaks] of Object.entries(results.at(-1)!.breaks)) expect(breaks, transport).toBeGreaterThan(0);
    for (const r of results) expect(r.stored).toBeGreaterThanOrEqual(r.acknowledgedInAll);
  });
});
