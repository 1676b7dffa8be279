// A graceful restart keeps everything, and a stream continues across it: the
// first turn after the restart is compared with the last one before.
import { describe, expect, it } from 'vitest';
import { breaksOf, everything } from './api.js';
import { openaiBreak, realisticBatch, REALISTIC_TURNS, SEED_TOOLS, seedBreak, splitTurn } from './events.js';
import { freshDb } from '../store-under-test.js';
import { postEvents, startServer, type Exit } from './server.js';

const SESSIONS = Object.keys(REALISTIC_TURNS);

describe('restart against a real server', () => {
  it('SIGTERM exits 0 after logging shutdown; a restart on the same database serves the same data', async () => {
    const first = await startServer();
    expect((await postEvents(first.url, realisticBatch())).body).toMatchObject({ accepted: 11 });
    const before = await everything(first.url, SESSIONS);

    expect(await first.stop('SIGTERM')).toEqual({ code: 0, signal: null });
    const shutdown = first.stderrLines.filter((l) => / event=shutdown( |$)/.test(l));
    expect(shutdown).toHaveLength(1);
    expect(shutdown[0]).toMatch(/ level=info event=shutdown signal=SIGTERM$/);

    const second = await startServer({ db: first.db });
    expect(second.db).toBe(first.db);
    expect(await everything(second.url, SESSIONS)).toEqual(before);

    // req_05 goes back to the seed's tool order: compared with req_04 (sent
    // before the restart), that is a re-order again.
    const { snapshot, usage } = splitTurn('sess_A', { requestId: 'req_05', at: 40, tools: SEED_TOOLS, read: 0, write: 49_600 });
    const reply = await postEvents(second.url, [snapshot, usage]);
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ accepted: 2, duplicates: 0, rejected: [] });
    // Newest first: sess_B's break (10:02) is later than req_05 (10:00:40).
    expect(await breaksOf(second.url)).toEqual([
      openaiBreak(),
      {
        ...seedBreak(),
        requestId: 'req_05',
        previousRequestId: 'req_04',
        ts: '2026-11-30T10:00:40.000Z',
        previousCacheReadTokens: 48_900,
        cacheWriteTokens: 49_600,
        expectedCacheReadTokens: 49_500,
        missedCacheReadTokens: 49_500,
        // From req_04's start (10:00:20).
        gapMs: 20_000,
        // 49,500 tokens written at $3.75 instead of read at $0.30 per MTok.
        estimatedExtraCostUsd: 0.170775,
      },
      seedBreak(),
    ]);

    expect(await second.stop('SIGINT')).toEqual({ code: 0, signal: null });
    expect(second.stderrLines.at(-1)).toMatch(/ level=info event=shutdown signal=SIGINT$/);
  });

  // A supervisor (systemd, Kubernetes, a test runner) may stop the server as
  // soon as it reports ready; that stop must be as graceful as any other.
  it('SIGTERM right after the listening line still exits 0 with a shutdown line', async () => {
    const db = await freshDb();
    const exits: { exit: Exit; shutdownLogged: boolean }[] = [];
    // Several tries: the window is short, and a loaded machine may miss it once.
    for (let i = 0; i < 5; i++) {
      const server = await startServer({ db });
      const exit = await server.stop('SIGTERM');
      exits.push({ exit, shutdownLogged: server.stderrLines.some((l) => / event=shutdown signal=SIGTERM$/.test(l)) });
    }
    expect(exits).toEqual(Array(5).fill({ exit: { code: 0, signal: null }, shutdownLogged: true }));
  });
});
