// GET /v1/breaks/fingerprints: the breaks of a range grouped by the
// fingerprint of their cause, on the store under test.
import { describe, expect, it } from 'vitest';
import { breakFingerprint } from '../../src/core/fingerprint.js';
import { hashString } from '../../src/core/hash.js';
import type { TurnEvent } from '../../src/core/types.js';
import { fingerprintsOf } from '../../src/store/fingerprints.js';
import { MINUTE, SEED_TOOLS, T0, toWire, tools, turn, usage, type TurnSpec } from '../core/scenario.js';
import { storeApp } from './harness.js';

const WARM = usage(48_900, 400);
const reordered = (first: string) => tools([first, ...SEED_TOOLS.filter((n) => n !== first)]);

/** A session of two turns `at` ms after T0 (two hours before the app's clock), the second changed by `change`. */
function session(sessionId: string, at: number, change: TurnSpec): TurnEvent[] {
  return [
    turn(`${sessionId}_1`, { sessionId, at, usage: WARM }),
    turn(`${sessionId}_2`, { sessionId, at: at + MINUTE, usage: usage(0, 49_300), ...change }),
  ];
}

const WORKLOAD = [
  ...session('s_shell_1', 0, { tools: reordered('shell') }),
  ...session('s_shell_2', 20 * MINUTE, { tools: reordered('shell') }),
  ...session('s_github', 10 * MINUTE, { tools: reordered('mcp__github__search_issues') }),
  ...session('s_system', 30 * MINUTE, { systemBlockHashes: [hashString('billing'), hashString('edited')] }),
];

async function seeded() {
  const app = await storeApp();
  expect((await app.post({ events: WORKLOAD.map(toWire) })).status).toBe(200);
  const breaks: any[] = (await app.get('/v1/breaks?limit=1000')).body.breaks;
  expect(breaks.map((b) => b.reason).sort()).toEqual(['system_changed', 'tools_order_changed', 'tools_order_changed', 'tools_order_changed']);
  return { ...app, breaks };
}

describe('GET /v1/breaks/fingerprints', () => {
  it('collapses the same cause across sessions into one row with its count, sessions, first and last seen and cost', async () => {
    const { get, store, breaks } = await seeded();
    const bySession = (id: string) => breaks.find((b) => b.sessionId === id);
    // The REST record carries the fingerprint the core computes from the stored record.
    const stored = (await store.breaks('default', {}, {}, { limit: 1000 })).items;
    for (const record of stored) expect(breaks.find((b) => b.requestId === record.requestId).fingerprint).toBe(breakFingerprint(record));

    const { status, body } = await get('/v1/breaks/fingerprints');
    expect(status).toBe(200);
    expect(body).toMatchObject({ breaks: 4, truncated: false });
    const shell = [bySession('s_shell_1'), bySession('s_shell_2')];
    expect(shell[0].fingerprint).toBe(shell[1].fingerprint);
    expect(body.fingerprints).toHaveLength(3);
    expect(body.fingerprints[0]).toEqual({
      fingerprint: shell[0].fingerprint,
      reason: 'tools_order_changed',
      cause: null,
      provider: 'anthropic',
      model: 'claude-sonnet-4-5',
      changedToolNames: shell[0].changedToolNames,
      changedSystemBlocks: null,
      changedParams: [],
      breaks: 2,
      sessions: 2,
      firstSeen: shell[0].ts,
      lastSeen: shell[1].ts,
      agentVersion: null,
      // Summed in micro-dollars, exactly, as every cost sum is.
      estimatedExtraCostUsd: (Math.round(shell[0].estimatedExtraCostUsd * 1e6) + Math.round(shell[1].estimatedExtraCostUsd * 1e6)) / 1e6,
    });
    expect(shell[0].estimatedExtraCostUsd).toBeGreaterThan(0);
    const rest = body.fingerprints.slice(1).map((row: any) => [row.fingerprint, row.breaks, row.sessions, row.changedToolNames, row.changedSystemBlocks]);
    expect(rest).toEqual(
      expect.arrayContaining([
        [bySession('s_github').fingerprint, 1, 1, bySession('s_github').changedToolNames, null],
        [bySession('s_system').fingerprint, 1, 1, [], [1]],
      ]),
    );
  });

  it('takes the range and the filters of the other break routes, and refuses a bad time naming it', async () => {
    const { get } = await seeded();
    const system = await get('/v1/breaks/fingerprints?reason=system_changed');
    expect(system.body.fingerprints.map((row: any) => [row.reason, row.breaks])).toEqual([['system_changed', 1]]);
    const sessions = await get('/v1/breaks/fingerprints?sessionId=s_shell_2,s_github');
    expect(sessions.body.fingerprints.map((row: any) => row.sessions)).toEqual([1, 1]);
    const early = await get(`/v1/breaks/fingerprints?from=${T0}&to=${T0 + 5 * MINUTE}`);
    expect(early.body).toMatchObject({ breaks: 1, truncated: false });
    const bad = await get('/v1/breaks/fingerprints?from=yesterday');
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain('from');
  });

  it('reads the newest breaks up to its bound and says when more lay in the range', async () => {
    const { store } = await seeded();
    const bounded = await fingerprintsOf(store, 'default', {}, {}, 2);
    expect(bounded).toMatchObject({ breaks: 2, truncated: true });
    // The newest two: the system edit and the second session's move.
    expect(bounded.rows.map((row) => row.reason).sort()).toEqual(['system_changed', 'tools_order_changed']);
    expect(await fingerprintsOf(store, 'default', {}, {}, 4)).toMatchObject({ breaks: 4, truncated: false });
  });
});
