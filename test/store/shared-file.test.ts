// Two processes may write one database (a server and `cachebreak tail --db`
// on a SQLite file; several servers on one PostgreSQL database): each must
// notice the other's writes before trusting what it cached.
import { describe, expect, it } from 'vitest';
import { SERVICE_DETECTION } from '../../src/prices/index.js';
import { evaluateEvents } from '../../src/core/stream.js';
import { MINUTE, SEED_TOOLS, tools, turn, usage } from '../core/scenario.js';
import { freshDb, openStore } from '../store-under-test.js';

describe('a database written by two connections', () => {
  it('evaluates each turn against the true previous turn, whoever wrote it', async () => {
    const db = await freshDb('shared');
    const a = await openStore(db);
    const b = await openStore(db);
    const events = [
      turn('t1', { usage: usage(0, 48_000) }),
      turn('t2', { at: MINUTE, usage: usage(48_000, 500) }),
      // Written by the other connection: a re-order that leaves nothing cached.
      turn('t3', { at: 2 * MINUTE, tools: tools([...SEED_TOOLS].reverse()), usage: usage(0, 48_500) }),
      // A miss whose previous turn is t3 (same tools: eviction), not t2 (which would read as a re-order).
      turn('t4', { at: 3 * MINUTE, tools: tools([...SEED_TOOLS].reverse()), usage: usage(0, 48_800) }),
    ];
    await a.write([{ project: 'default', events: [events[0]!, events[1]!] }]);
    await b.write([{ project: 'default', events: [events[2]!] }]);
    await a.write([{ project: 'default', events: [events[3]!] }]);
    const stored = (await a.sessionTurns('default', 'sess_A'))!.map((t) => [t.requestId, t.state, t.break?.previousRequestId ?? null]);
    const reference = evaluateEvents(events, SERVICE_DETECTION).map((e) => [e.requestId, e.state, e.break?.previousRequestId ?? null]);
    expect(stored).toEqual(reference);
    expect(stored).toEqual([
      ['t1', 'cold', null],
      ['t2', 'hit', null],
      ['t3', 'miss', 't2'],
      ['t4', 'miss', 't3'],
    ]);
  });
});
