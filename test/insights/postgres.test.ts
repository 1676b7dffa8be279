// Every insight computed from the PostgreSQL store equals the one computed
// from the SQLite store, on the crafted workloads the insight tests check by
// hand (test/insights/*.test.ts), with a stream that idles for hours so that
// every gap bucket and more than one hour of gap rollups is read.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readInsights } from '../../src/insights/index.js';
import { SERVICE_DETECTION } from '../../src/prices/index.js';
import { PgStore } from '../../src/store/pg/store.js';
import type { IngestBatch, Store, TimeRange } from '../../src/store/store.js';
import { MINUTE, T0, turn, usage } from '../core/scenario.js';
import { freshStore } from '../helpers.js';
import { freshDatabase, type TestDatabase } from '../pg.js';
import { avoidableWorkload, agreementWorkload, chronicWorkload, fanOutWorkload, ttlWorkload, volatileWorkload } from './workloads.js';

const HOUR = 60 * MINUTE;

/** sess_idle comes back after 3 hours, then after 40 minutes, then within a minute. */
const IDLE = [0, 3 * HOUR, 3 * HOUR + 40 * MINUTE, 3 * HOUR + 41 * MINUTE].map((at, i) =>
  turn(`idle-${i}`, { sessionId: 'sess_idle', at, usage: i === 0 ? usage(0, 48_900) : usage(48_000, 900) }),
);

const agreement = agreementWorkload();
const WORKLOADS: IngestBatch[] = [
  { project: 'avoidable', events: avoidableWorkload() },
  { project: 'ttl', events: [...ttlWorkload(), ...IDLE] },
  { project: 'volatile', events: volatileWorkload() },
  { project: 'chronic', events: chronicWorkload() },
  { project: 'fanout', events: fanOutWorkload() },
  { project: 'agreement', events: agreement.events, externalBreaks: agreement.externalBreaks },
];

const RANGES: TimeRange[] = [{}, { from: T0 - MINUTE, to: T0 + 4 * HOUR }, { from: T0 + 30 * MINUTE }, { to: T0 + 2_000 }, { from: T0 + 3 * HOUR + 30 * MINUTE }];

let database: TestDatabase;
let pg: PgStore;

beforeAll(async () => {
  database = await freshDatabase('pginsights');
  pg = await PgStore.open(database.url, SERVICE_DETECTION, { pool: 2 });
});

afterAll(async () => {
  await pg?.close();
  await database?.drop();
});

/** Every insight and every insight read of a project, as one value. */
async function insightsOf(store: Store, project: string) {
  const out: unknown[] = [];
  for (const range of RANGES) {
    out.push(await readInsights(store, SERVICE_DETECTION.prices, project, range));
    out.push(await store.gapRows(project, range, {}), await store.coldTurns(project, range, {}, 100), await store.lowRateStreams(project, range, {}, 1, 1, 100));
  }
  return out;
}

describe('insights on PostgreSQL', () => {
  it('are the SQLite store’s on every crafted workload and range', async () => {
    const sqlite = freshStore();
    try {
      for (const batch of WORKLOADS) {
        // Each event on its own for PostgreSQL: late turns revise what is stored, as they arrive.
        await sqlite.write([batch]);
        for (const event of batch.events) await pg.write([{ project: batch.project, events: [event] }]);
        if (batch.externalBreaks) await pg.write([{ project: batch.project, events: [], externalBreaks: batch.externalBreaks }]);
      }
      for (const { project } of WORKLOADS) expect(await insightsOf(pg, project), project).toEqual(await insightsOf(sqlite, project));

      // What was compared holds what the hand-checked tests expect to find.
      const ttl = await readInsights(sqlite, SERVICE_DETECTION.prices, 'ttl', {});
      const idle = ttl.ttl.groups.find((g) => g.sessionId === 'sess_idle')!;
      expect(idle.gaps).toEqual({ first: 1, within_5m: 1, within_1h: 1, over_1h: 1 });
      expect((await readInsights(sqlite, SERVICE_DETECTION.prices, 'fanout', {})).fanOut.fanOuts.length).toBeGreaterThan(0);
      expect((await readInsights(sqlite, SERVICE_DETECTION.prices, 'chronic', {})).chronic.length).toBeGreaterThan(0);
      expect((await readInsights(sqlite, SERVICE_DETECTION.prices, 'avoidable', {})).avoidable.fixes.length).toBeGreaterThan(0);
      expect((await readInsights(sqlite, SERVICE_DETECTION.prices, 'volatile', {})).volatile.length).toBeGreaterThan(0);
      for (const stream of (await readInsights(sqlite, SERVICE_DETECTION.prices, 'chronic', {})).chronic) {
        expect(await pg.streamSnapshots('chronic', stream.sessionId, stream.agentId, 20)).toEqual(await sqlite.streamSnapshots('chronic', stream.sessionId, stream.agentId, 20));
      }
    } finally {
      await sqlite.close();
    }
  });
});
