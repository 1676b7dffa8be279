// With a background checkpointer, the WAL is copied into the database file
// while ingest goes on, without the writer doing it.
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SERVICE_DETECTION } from '../../src/prices/index.js';
import { SqliteStore } from '../../src/store/sqlite/store.js';
import { MINUTE, turn, usage } from '../core/scenario.js';
import { tempDir } from '../helpers.js';

describe('background checkpointer', () => {
  it('moves written pages into the database file, and stops with the store', async () => {
    const file = join(tempDir(), 'ck.db');
    const store = new SqliteStore(file, SERVICE_DETECTION, { backgroundCheckpoint: true });
    const before = statSync(file).size;
    const events = Array.from({ length: 3_000 }, (_, i) =>
      turn(`r${i}`, { sessionId: `s${i % 50}`, at: i * MINUTE, usage: usage(i % 7 === 0 ? 0 : 40_000, 500) }),
    );
    await store.write([{ project: 'default', events }]);
    // The writer itself never checkpoints this little WAL (its threshold is ~400 MiB).
    let grown = false;
    for (let i = 0; i < 40 && !grown; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      grown = statSync(file).size > before;
    }
    expect(grown).toBe(true);
    expect(statSync(`${file}-wal`).size).toBeGreaterThan(0);
    await store.close();
    const reopened = new SqliteStore(file, SERVICE_DETECTION);
    expect((await reopened.sessions('default', {}, {}, { limit: 100 })).items).toHaveLength(50);
    expect(reopened.sqlite.pragma('integrity_check', { simple: true })).toBe('ok');
    await reopened.close();
  });
});
