// A join across two export requests survives a failed write: when the request
// that completes a Claude Code body pair cannot be stored (503), its retry
// must still find the other half and store the full snapshot.
import { describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS } from '../../src/ingest/limits.js';
import { Pipeline } from '../../src/ingest/pipeline.js';
import { OtlpReceiver } from '../../src/ingest/otlp/receive.js';
import type { LogRecord } from '../../src/ingest/otlp/records.js';
import { Counters } from '../../src/telemetry/counters.js';
import { createLogger } from '../../src/telemetry/logfmt.js';
import { freshStore } from '../helpers.js';
import { fixture, only } from './sources/helpers.js';

const v332 = fixture('claude-code/2.1.332.json');

function receiverOf(store: ReturnType<typeof freshStore>) {
  return new OtlpReceiver({
    pipeline: new Pipeline(store, new Counters(), createLogger(() => {})),
    counters: new Counters(),
    now: Date.now,
    limits: DEFAULT_LIMITS,
  });
}

describe('OTLP joins across requests', () => {
  it('are undone when the write fails, so that the retry joins again', async () => {
    const store = freshStore();
    const receiver = receiverOf(store);
    const send = (record: LogRecord) => receiver.export('default', 'logs', { telemetry: only({ logs: [record] }), ignored: {} }, 'otlp_http');
    // One record per request, in the harness's order; the first delivery of
    // each fails while the database refuses writes, and is retried.
    let refused = 0;
    for (const record of v332.logs) {
      store.sqlite.pragma('query_only = ON');
      await send(record).catch((error: { status?: number }) => {
        expect(error.status).toBe(503);
        refused++;
      });
      store.sqlite.pragma('query_only = OFF');
      await send(record);
    }
    // Every record that completes a body pair was refused once.
    expect(refused).toBeGreaterThanOrEqual(4);
    const { items } = await store.breaks('default', {}, {}, { limit: 5 });
    // Attributed from the snapshots the bodies gave: without them it would be `unknown`.
    expect(items.map((b) => [b.reason, b.changedToolNames])).toEqual([['tools_order_changed', ['mcp__filesystem__read_tree', 'mcp__github__search_issues']]]);
  });
});
