// When the disk is full or the database read-only, ingest answers 503 with
// Retry-After and a clear message, acknowledges nothing it did not store, and
// recovers by itself when space (or write access) returns. Nothing is corrupted.
//
// "Acknowledges nothing it did not store" is proven exactly: every reply is
// kept, and the sum of `accepted` over the 200s must equal the rows in the
// file, request id for request id. "By itself": the same app and connection
// go on, with nothing restarted or reopened; only the condition clears, and
// each refused request, retried as a client would, is then stored whole
// (accepted in full, not one duplicate: the 503 had stored none of it).
import { execFileSync } from 'node:child_process';
import { closeSync, existsSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { toWire, turn, usage } from '../core/scenario.js';
import { tempDir } from '../helpers.js';
import { testApp } from '../serve/harness.js';

type App = ReturnType<typeof testApp>;

const ids = (from: number, size: number) => Array.from({ length: size }, (_, i) => `r${from + i}`);
const batch = (requestIds: readonly string[]) => ({
  events: requestIds.map((id) => {
    const n = Number(id.slice(1));
    return toWire(turn(id, { sessionId: `s${n % 7}`, at: n * 1_000, usage: usage(0, 5_000) }));
  }),
});

/** Every request id in the file, read from the turns table itself. */
function storedIds(app: App): Set<string> {
  return new Set((app.store.sqlite.prepare('SELECT request_id FROM turns').all() as { request_id: string }[]).map((r) => r.request_id));
}

async function turnCount(get: App['get']): Promise<number> {
  const { body } = await get('/v1/sessions?limit=1000');
  return body.sessions.reduce((n: number, s: { turns: number }) => n + s.turns, 0);
}

/** The ledger of one test: what each request sent, and what the server said it took. */
class Ledger {
  readonly acknowledged = new Set<string>();
  readonly refused: string[][] = [];
  accepted = 0;

  constructor(private readonly app: App) {}

  /** Posts one request; a 200 must take the whole batch, anything else must be a 503 naming the cause. */
  async post(requestIds: readonly string[]): Promise<Response> {
    const response = await this.app.post(batch(requestIds));
    const body = (await response.clone().json()) as any;
    if (response.status === 200) {
      expect(body).toEqual({ accepted: requestIds.length, duplicates: 0, rejected: [] });
      this.accepted += body.accepted;
      for (const id of requestIds) this.acknowledged.add(id);
    } else {
      expect(response.status).toBe(503);
      expect(response.headers.get('retry-after')).toBe('5');
      expect(body.error.code).toBe('unavailable');
      expect(body.error.message).toMatch(/^the database cannot take writes right now \(SQLITE_[A-Z_]+\); nothing from this request was stored$/);
      expect(body.error.hint).toContain('free disk space');
      this.refused.push([...requestIds]);
    }
    return response;
  }

  /** The exact promise: the rows in the file are the acknowledged requests, no more and no fewer. */
  expectStoredExactly(): void {
    const stored = storedIds(this.app);
    expect(stored.size).toBe(this.accepted);
    expect([...stored].sort()).toEqual([...this.acknowledged].sort());
  }

  /** Recovery: each refused request, retried unchanged, is now taken whole. */
  async retryRefused(): Promise<void> {
    const refused = this.refused.splice(0);
    for (const requestIds of refused) expect((await this.post(requestIds)).status).toBe(200);
  }
}

// ---- a read-only file ---------------------------------------------------
//
// As root, chmod 0444 stops nothing (CAP_DAC_OVERRIDE), and a permission
// change never reaches a file the server already has open. The immutable
// attribute (chattr +i) does both: the kernel refuses every write to the
// file, through descriptors opened before as well, to root too, until
// chattr -i. It needs CAP_LINUX_IMMUTABLE and a file system that has the
// attribute (ext4, xfs, btrfs); where either is missing (a non-root CI
// runner, tmpfs) the read-only test falls back to PRAGMA query_only, which
// refuses writes at the SQLite level instead (SQLITE_READONLY), and says so
// in its name. Only the main file and the -wal are made immutable: the
// -shm is SQLite's shared memory, written through mmap, and a store through
// a mapping of an immutable file is a SIGBUS rather than an error.

const immutable: string[] = [];

function chattr(flag: '+i' | '-i', file: string): void {
  execFileSync('chattr', [flag, file], { stdio: 'pipe' });
}

/** Whether chattr +i works here and really refuses a write through an open descriptor. */
function immutableWorks(): boolean {
  const probe = join(tempDir(), 'probe');
  const fd = openSync(probe, 'w');
  try {
    chattr('+i', probe);
  } catch {
    closeSync(fd);
    return false;
  }
  try {
    writeSync(fd, 'x');
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  } finally {
    chattr('-i', probe);
    closeSync(fd);
  }
}

const CAN_MAKE_IMMUTABLE = immutableWorks();

// Never leave an immutable file behind: the temporary directory could not be removed.
afterEach(() => {
  for (const file of immutable.splice(0)) chattr('-i', file);
});

/** Makes the database read-only (chattr +i on the file and its WAL, else query_only); returns how to undo it. */
function makeReadOnly(app: App): () => void {
  if (!CAN_MAKE_IMMUTABLE) {
    app.store.sqlite.pragma('query_only = 1');
    return () => app.store.sqlite.pragma('query_only = 0');
  }
  const file = app.store.sqlite.name;
  const files = [file, `${file}-wal`].filter((f) => existsSync(f));
  expect(files).toHaveLength(2);
  for (const f of files) {
    chattr('+i', f);
    immutable.push(f);
  }
  return () => {
    for (const f of files) {
      chattr('-i', f);
      immutable.splice(immutable.indexOf(f), 1);
    }
  };
}

describe('disk full and read-only database', () => {
  it('answers 503 while the disk is full, acknowledges exactly what it stored, and recovers by itself when space returns', async () => {
    const app = testApp();
    const ledger = new Ledger(app);
    expect((await ledger.post(ids(0, 200))).status).toBe(200);
    const pages = app.store.sqlite.pragma('page_count', { simple: true }) as number;
    // "Full": the file may grow by a little only, so that the disk fills in the middle of the
    // requests below: some are still stored and acknowledged, then none.
    app.store.sqlite.pragma(`max_page_count = ${pages + 40}`);
    // Four requests at a time, so that they are written together (group commit) and a failed
    // group has to give each request its own outcome; until several have been refused.
    let next = 200;
    for (let round = 0; round < 60 && ledger.refused.length < 8; round++) {
      await Promise.all(Array.from({ length: 4 }, () => ledger.post(ids((next += 50) - 50, 50))));
    }
    expect(ledger.refused.length).toBeGreaterThanOrEqual(8);
    // The disk filled in the middle: requests were still stored and acknowledged after it began to fill.
    expect(ledger.accepted).toBeGreaterThan(200);
    // Requests kept being answered 200 after the first refusal only if they were stored: count them.
    ledger.expectStoredExactly();
    expect(await turnCount(app.get)).toBe(ledger.accepted);
    expect(app.store.sqlite.pragma('integrity_check', { simple: true })).toBe('ok');

    // Space returns; nothing else changes.
    app.store.sqlite.pragma('max_page_count = 1073741823');
    const before = ledger.accepted;
    await ledger.retryRefused();
    expect(ledger.refused).toEqual([]);
    expect(ledger.accepted).toBeGreaterThan(before);
    expect((await ledger.post(ids(100_000, 200))).status).toBe(200);
    ledger.expectStoredExactly();
    expect(ledger.acknowledged.size).toBe(next + 200); // every request ever sent (r0…r{next-1} and the last 200), once
    expect(await turnCount(app.get)).toBe(ledger.accepted);
    expect(app.store.sqlite.pragma('integrity_check', { simple: true })).toBe('ok');
  });

  it(`answers 503 while the database ${CAN_MAKE_IMMUTABLE ? 'file is read-only (chattr +i)' : 'is read-only (PRAGMA query_only: chattr +i is not possible here)'}, acknowledges exactly what it stored, and recovers by itself`, async () => {
    const app = testApp();
    const ledger = new Ledger(app);
    expect((await ledger.post(ids(0, 10))).status).toBe(200);
    const writable = makeReadOnly(app);
    for (let i = 1; i <= 4; i++) {
      const refused = await ledger.post(ids(i * 10, 10));
      expect(refused.status).toBe(503);
      expect(((await refused.json()) as any).error.message).toContain(CAN_MAKE_IMMUTABLE ? '(SQLITE_IOERR' : '(SQLITE_READONLY)');
    }
    // Reads still work, and see only what was acknowledged.
    expect(await turnCount(app.get)).toBe(10);
    ledger.expectStoredExactly();

    writable();
    await ledger.retryRefused();
    expect((await ledger.post(ids(50, 10))).status).toBe(200);
    ledger.expectStoredExactly();
    expect(ledger.accepted).toBe(60);
    expect(await turnCount(app.get)).toBe(60);
    expect(app.store.sqlite.pragma('integrity_check', { simple: true })).toBe('ok');
  });

  it('answers 503 while PRAGMA query_only holds (SQLITE_READONLY), acknowledges exactly what it stored, and recovers by itself', async () => {
    const app = testApp();
    const ledger = new Ledger(app);
    expect((await ledger.post(ids(0, 10))).status).toBe(200);
    app.store.sqlite.pragma('query_only = 1');
    const refused = await ledger.post(ids(10, 10));
    expect(refused.status).toBe(503);
    expect(((await refused.json()) as any).error.message).toContain('(SQLITE_READONLY)');
    expect(await turnCount(app.get)).toBe(10);
    ledger.expectStoredExactly();
    app.store.sqlite.pragma('query_only = 0');
    await ledger.retryRefused();
    ledger.expectStoredExactly();
    expect(await turnCount(app.get)).toBe(20);
  });
});
