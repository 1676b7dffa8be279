// A SQLite database written by an earlier release is migrated on open: the
// break rollups that later migrations add are filled from the breaks already
// stored, and equal an aggregation of them.
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SERVICE_DETECTION } from '../../src/prices/index.js';
import { SqliteStore } from '../../src/store/sqlite/store.js';
import { tempDir } from '../helpers.js';
import { causesOf, toolsOf } from './break-aggregates.js';

describe('break rollups of a database from an earlier release', () => {
  it('are filled from the breaks already stored when it is migrated', async () => {
    const db = join(tempDir(), 'v0.1.0.db');
    copyFileSync(new URL('../fixtures/db/v0.1.0.db', import.meta.url), db);
    const store = new SqliteStore(db, SERVICE_DETECTION);
    try {
      const records = (await store.breaks('default', {}, {}, { limit: 1000 })).items;
      expect(records.map((b) => b.reason).sort()).toEqual(['system_changed', 'tools_order_changed']);
      expect(await store.breakCauses('default', {}, {})).toEqual(causesOf(records));
      expect(await store.changedTools('default', {}, {}, 100)).toEqual(toolsOf(records));
      expect(await store.changedTools('default', {}, {}, 100)).toHaveLength(2);
    } finally {
      await store.close();
    }
  });
});
