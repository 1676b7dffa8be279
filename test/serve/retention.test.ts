// `serve --retain` deletes raw turns past their age when it starts (and every
// ten minutes), and logs what it deleted.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SERVICE_DETECTION } from '../../src/prices/index.js';
import { startServer } from '../../src/server.js';
import { SqliteStore } from '../../src/store/sqlite/store.js';
import { MINUTE, turn, usage } from '../core/scenario.js';
import { tempDir } from '../helpers.js';

const DAY = 24 * 60 * MINUTE;

describe('serve --retain', () => {
  it('deletes turns older than the retention on start and keeps the rest', async () => {
    const db = join(tempDir(), 'r.db');
    const seed = new SqliteStore(db, SERVICE_DETECTION);
    const old = Date.now() - 5 * DAY;
    const recent = Date.now() - DAY / 2;
    await seed.write([
      {
        project: 'default',
        events: [
          turn('old', { sessionId: 'old', at: old - Date.parse('2026-11-30T10:00:00Z'), usage: usage(0, 5_000) }),
          turn('new', { sessionId: 'new', at: recent - Date.parse('2026-11-30T10:00:00Z'), usage: usage(0, 5_000) }),
        ],
      },
    ]);
    await seed.close();
    const lines: string[] = [];
    const server = await startServer(
      { host: '127.0.0.1', port: 0, db, bodyLimit: 1 << 20, detection: SERVICE_DETECTION, synchronous: 'normal', project: 'default', retainMs: 2 * DAY },
      (line) => lines.push(line),
    );
    try {
      for (let i = 0; i < 50 && !lines.some((l) => l.includes('event=retention')); i++) await new Promise((r) => setTimeout(r, 20));
      expect(lines.find((l) => l.includes('event=retention'))).toContain('deletedTurns=1');
      const turns = async (session: string) => ((await (await fetch(`${server.url}/v1/sessions/${session}/turns`)).json()) as { turns: unknown[] }).turns;
      expect(await turns('old')).toEqual([]);
      expect(await turns('new')).toHaveLength(1);
    } finally {
      await server.close();
    }
  });
});
