// `cachebreak reevaluate`: every stored turn judged again — under this
// version's rules for a database written by an older one, or under new
// thresholds — with nothing stored lost.
import { copyFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SERVICE_DETECTION } from '../../src/prices/index.js';
import { SqliteStore } from '../../src/store/sqlite/store.js';
import { tempDir } from '../helpers.js';
import { cli } from './run.js';

const FIXTURE_V0_1_0 = new URL('../fixtures/db/v0.1.0.db', import.meta.url);

async function read(db: string) {
  const store = new SqliteStore(db, SERVICE_DETECTION);
  try {
    const breaks = (await store.breaks('default', {}, {}, { limit: 100 })).items;
    const turns = [...((await store.sessionTurns('default', 'sess_A')) ?? []), ...((await store.sessionTurns('default', 'sess_B')) ?? [])];
    const outdated = await store.needsReevaluation();
    return { breaks, turns, outdated };
  } finally {
    await store.close();
  }
}

describe('cachebreak reevaluate', () => {
  it('upgrades a database written under the first detection rules, with its progress on stderr', async () => {
    const db = join(tempDir(), 'v0.1.0.db');
    copyFileSync(FIXTURE_V0_1_0, db);
    const { code, stdout, stderr } = await cli(['reevaluate', '--db', db]);
    expect(code).toBe(0);
    expect(stdout).toBe('Evaluated 2 streams again; 2 break records were found, changed or dropped.\n');
    expect(stderr).toMatch(/ level=info event=reevaluation_started why="asked for on the command line"\n/);
    expect(stderr).toMatch(/ event=reevaluation_progress streams=2 of=2 percent=100\n/);
    const { breaks, turns, outdated } = await read(db);
    expect(outdated).toBe(false);
    // v2 records: the OpenAI break is measured against b_02's whole prompt (automatic caching).
    expect(breaks.map((b) => [b.requestId, b.reason, b.expectedCacheReadTokens, b.changesAfterCachedPrefix])).toEqual([
      ['b_03', 'system_changed', 30_500, []],
      ['req_03', 'tools_order_changed', 48_900, []],
    ]);
    expect(turns).toHaveLength(7);
  });

  it('judges again by new thresholds, and back', async () => {
    const db = join(tempDir(), 'v0.1.0.db');
    copyFileSync(FIXTURE_V0_1_0, db);
    expect((await cli(['reevaluate', '--db', db])).code).toBe(0);
    const before = await read(db);
    // With a 60,000-token floor neither miss is a break; the turns stay.
    expect((await cli(['reevaluate', '--db', db, '--min-miss-tokens', '60000'])).stdout).toMatch(/2 break records were found, changed or dropped/);
    const strict = await read(db);
    expect(strict.breaks).toEqual([]);
    expect(strict.turns.map((t) => t.requestId)).toEqual(before.turns.map((t) => t.requestId));
    expect(strict.turns.filter((t) => t.state === 'miss')).toEqual([]);
    expect((await cli(['reevaluate', '--db', db])).code).toBe(0);
    expect((await read(db)).breaks).toEqual(before.breaks);
  });

  it('report only reads: it says how to bring an old database up to date, and leaves it as it was', async () => {
    const db = join(tempDir(), 'v0.1.0.db');
    copyFileSync(FIXTURE_V0_1_0, db);
    const { code, stderr } = await cli(['report', '--db', db]);
    expect(code).toBe(0);
    expect(stderr).toContain(`was judged by older detection rules; run \`cachebreak reevaluate --db ${db}\``);
    expect((await read(db)).outdated).toBe(true);
  });

  it('a command that writes the database (import) brings it up to date first, with its own options', async () => {
    const db = join(tempDir(), 'v0.1.0.db');
    copyFileSync(FIXTURE_V0_1_0, db);
    const file = join(tempDir(), 'events.ndjson');
    writeFileSync(file, JSON.stringify({ type: 'usage', requestId: 'late', sessionId: 'sess_C', ts: 1764496800000, uncachedInputTokens: 10, cacheReadInputTokens: 0 }) + '\n');
    const { code, stderr } = await cli(['import', '--db', db, '--min-miss-tokens', '60000', file]);
    expect(code).toBe(0);
    // Both stored breaks are dropped under the higher floor.
    expect(stderr).toMatch(/ event=reevaluation_done streams=2 breaksChanged=2 /);
    const { breaks, outdated } = await read(db);
    expect(outdated).toBe(false);
    // Judged with the import's 60,000-token floor: no break.
    expect(breaks).toEqual([]);
  });

  it('says when there is no database', async () => {
    const { code, stderr } = await cli(['reevaluate', '--db', join(tempDir(), 'missing.db')]);
    expect(code).toBe(1);
    expect(stderr).toMatch(/^cachebreak reevaluate: no database at .*missing\.db; point --db at one\n$/);
  });
});
