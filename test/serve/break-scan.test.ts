// GET /v1/breaks?fingerprint=…: the breaks of chosen causes, paged, on the
// store under test; the same cause in several sessions, another cause beside
// it, and the bound on what is read (the agreement filters are
// test/e2e/harness-verdicts.test.ts's).
import { describe, expect, it } from 'vitest';
import { hashString } from '../../src/core/hash.js';
import { breakFingerprint } from '../../src/core/fingerprint.js';
import { breaksWhere } from '../../src/store/break-scan.js';
import { MINUTE, SECOND, SEED_TOOLS, toWire, tools, turn, usage } from '../core/scenario.js';
import { storeApp } from './harness.js';

const WARM = usage(48_900, 400);
const COLD = usage(0, 49_300);
const moved = tools([SEED_TOOLS.at(-1)!, ...SEED_TOOLS.slice(0, -1)]);

/** Seven sessions whose tools move (one cause), and three whose system prompt is edited (another), the older costing more. */
const WORKLOAD = [
  ...Array.from({ length: 7 }, (_, i) => [
    turn(`tools_${i}_1`, { sessionId: `s_tools_${i}`, at: i * 3 * MINUTE, usage: WARM }),
    turn(`tools_${i}_2`, { sessionId: `s_tools_${i}`, at: i * 3 * MINUTE + MINUTE, usage: COLD, tools: moved }),
  ]),
  ...Array.from({ length: 3 }, (_, i) => [
    turn(`system_${i}_1`, { sessionId: `s_system_${i}`, at: i * 3 * MINUTE + 30_000, usage: usage(48_900 + (2 - i) * 5_000, 400) }),
    turn(`system_${i}_2`, { sessionId: `s_system_${i}`, at: i * 3 * MINUTE + 90_000, usage: usage(0, 49_300 + (2 - i) * 5_000), systemBlockHashes: [hashString('billing'), hashString(`edit ${i}`)] }),
  ]),
].flat();

async function seeded() {
  const app = await storeApp();
  expect((await app.post({ events: WORKLOAD.map(toWire) })).status).toBe(200);
  const { body } = await app.get('/v1/breaks/fingerprints');
  expect(body.fingerprints.map((row: any) => [row.reason, row.breaks])).toEqual([
    ['tools_order_changed', 7],
    ['system_changed', 3],
  ]);
  const [tools, system] = body.fingerprints.map((row: any) => row.fingerprint as string);
  return { ...app, tools: tools!, system: system! };
}

describe('GET /v1/breaks by fingerprint', () => {
  it("pages through one cause's breaks, newest first, and only through them", async () => {
    const { get, tools } = await seeded();
    const seen: string[] = [];
    let cursor: string | null = null;
    for (let pages = 0; pages < 5; pages++) {
      const { status, body } = await get(`/v1/breaks?fingerprint=${tools}&limit=3${cursor ? `&cursor=${cursor}` : ''}`);
      expect(status).toBe(200);
      expect(body.breaks.length).toBeLessThanOrEqual(3);
      for (const b of body.breaks) expect([b.reason, b.fingerprint]).toEqual(['tools_order_changed', tools]);
      seen.push(...body.breaks.map((b: any) => b.requestId));
      cursor = body.nextCursor;
      if (cursor === null) break;
    }
    expect(cursor).toBeNull();
    expect(seen).toEqual(Array.from({ length: 7 }, (_, i) => `tools_${6 - i}_2`));
  });

  it('takes several causes and the other filters together', async () => {
    const { get, tools, system } = await seeded();
    const both = await get(`/v1/breaks?fingerprint=${tools},${system}`);
    expect(both.body.breaks).toHaveLength(10);
    const narrowed = await get(`/v1/breaks?fingerprint=${system}&sessionId=s_system_1,s_tools_1`);
    expect(narrowed.body.breaks.map((b: any) => b.requestId)).toEqual(['system_1_2']);
    const none = await get(`/v1/breaks?fingerprint=${'0'.repeat(16)}`);
    expect(none.body).toEqual({ breaks: [], nextCursor: null });
  });

  it('refuses what is not a fingerprint or a cursor it issued, naming the field', async () => {
    const { get, tools } = await seeded();
    const bad = await get('/v1/breaks?fingerprint=tools_order_changed');
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain('fingerprint: expected 16 lowercase hex digits');
    expect(bad.body.error.hint).toContain('/v1/breaks/fingerprints');
    const cursor = Buffer.from(JSON.stringify([-3])).toString('base64url');
    const negative = await get(`/v1/breaks?fingerprint=${tools}&cursor=${cursor}`);
    expect(negative.status).toBe(400);
    expect(negative.body.error.message).toContain('cursor');
  });

  it('reads no more breaks than its bound, in the order asked for', async () => {
    const { store, system } = await seeded();
    // The newest five breaks (at 19, 16, 13, 10 and 7.5 minutes) hold one system edit; all ten hold three.
    const bounded = await breaksWhere(store, 'default', {}, {}, { fingerprint: [system] }, { limit: 10 }, 'recent', 5);
    expect(bounded.items.map((b) => b.requestId)).toEqual(['system_2_2']);
    const all = await breaksWhere(store, 'default', {}, {}, { fingerprint: [system] }, { limit: 10 }, 'extra_cost');
    expect(all.items.map((b) => breakFingerprint(b))).toEqual([system, system, system]);
    const byCost = (await store.breaks('default', {}, {}, { limit: 100 }, 'extra_cost')).items;
    expect(all.items.map((b) => b.requestId)).toEqual(['system_0_2', 'system_1_2', 'system_2_2']);
    expect(all.items.map((b) => b.requestId)).toEqual(byCost.filter((r) => breakFingerprint(r) === system).map((r) => r.requestId));
  });

  it('reads on from where the last page ended, not again from the start', async () => {
    // 2,500 breaks of one cause: more than two of the thousands the store is read in (sessions two seconds apart, all before NOW).
    const { store, tools } = await seededWith(2_500);
    let read = 0;
    const counted = new Proxy(store, {
      get: (target, name) =>
        name === 'breaks'
          ? async (...args: Parameters<typeof store.breaks>) => {
              const page = await target.breaks(...args);
              read += page.items.length;
              return page;
            }
          : Reflect.get(target, name, target),
    });
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await breaksWhere(counted, 'default', {}, {}, { fingerprint: [tools] }, cursor === undefined ? { limit: 1_000 } : { limit: 1_000, cursor });
      seen.push(...page.items.map((b) => b.requestId));
      cursor = page.nextCursor ?? undefined;
    } while (cursor !== undefined);
    expect(seen).toEqual(Array.from({ length: 2_500 }, (_, i) => `many_${2_499 - i}_2`));
    // Each page reads the thousand it starts in and the next: 2,000 + 1,500 + 500. From the start each time: 2,000 + 2,500 + 2,500.
    expect(read).toBe(4_000);
  });
});

/** `sessions` sessions whose tools move, a break each: one cause. */
async function seededWith(sessions: number) {
  const app = await storeApp({ bodyLimit: 64 * 1024 * 1024 });
  const events = Array.from({ length: sessions }, (_, i) => [
    turn(`many_${i}_1`, { sessionId: `s_many_${i}`, at: i * 2 * SECOND, usage: WARM }),
    turn(`many_${i}_2`, { sessionId: `s_many_${i}`, at: i * 2 * SECOND + 5 * SECOND, usage: COLD, tools: moved }),
  ]).flat();
  expect((await app.post({ events: events.map(toWire) })).status).toBe(200);
  const { body } = await app.get('/v1/breaks/fingerprints');
  expect(body.fingerprints.map((row: any) => [row.reason, row.breaks])).toEqual([['tools_order_changed', sessions]]);
  return { ...app, tools: body.fingerprints[0].fingerprint as string };
}
