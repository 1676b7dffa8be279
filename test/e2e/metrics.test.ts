// GET /metrics of a real server: valid Prometheus text format (checked by
// promtool itself), counters that match what was accepted, repeated and
// rejected, and series that depend only on what is stored.
import { describe, expect, it } from 'vitest';
import { promtoolCheck, samples } from './exposition.js';
import { realisticBatch, seedSession, splitTurn } from './events.js';
import { mixedWorkload, UNPRICED_MODEL, WAITING_USAGE, waitingSnapshot } from './mixed-workload.js';
import { getJson, postEvents, request, startServer } from './server.js';

async function metrics(url: string): Promise<string> {
  const reply = await request(url, '/metrics');
  expect(reply.status).toBe(200);
  expect(reply.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
  return reply.text;
}

const SONNET = 'project="default",model="claude-sonnet-4-5",provider="anthropic"';
const GPT = 'project="default",model="gpt-4.1",provider="openai"';

describe('/metrics against a real server', () => {
  it('passes promtool check metrics and counts accepted, duplicate and rejected events', async () => {
    const server = await startServer();
    expect((await postEvents(server.url, realisticBatch())).body).toEqual({ accepted: 11, duplicates: 0, rejected: [] });
    expect((await postEvents(server.url, realisticBatch())).body).toEqual({ accepted: 0, duplicates: 11, rejected: [] });
    // A model name that needs escaping in a label value, and two bad events.
    const odd = splitTurn('sess_odd', { requestId: 'odd_01', at: 0, read: 0, write: 3_000 });
    const reply = await postEvents(server.url, [
      { ...odd.snapshot, model: 'my "fine-tuned" model\\v2' },
      { ...odd.usage, model: 'my "fine-tuned" model\\v2' },
      { type: 'completion' },
      { ...odd.snapshot, requestId: 'odd_02', model: undefined },
    ]);
    expect(reply.body).toMatchObject({ accepted: 2, duplicates: 0, rejected: [{ index: 2 }, { index: 3 }] });

    const text = await metrics(server.url);
    expect(promtoolCheck(text)).toEqual({ status: 0, output: '' });

    const got = samples(text);
    expect(got.get('cachebreak_events_total{project="default",receiver="http",outcome="accepted"}')).toBe(13);
    expect(got.get('cachebreak_events_total{project="default",receiver="http",outcome="duplicate"}')).toBe(11);
    expect(got.get('cachebreak_events_total{project="default",receiver="http",outcome="rejected"}')).toBe(2);
    // Duplicates add nothing to what is stored.
    expect(got.get(`cachebreak_turns_total{${SONNET},state="cold"}`)).toBe(1);
    expect(got.get(`cachebreak_turns_total{${SONNET},state="hit"}`)).toBe(2);
    expect(got.get(`cachebreak_turns_total{${SONNET},state="miss"}`)).toBe(1);
    expect(got.get(`cachebreak_turns_total{${GPT},state="miss"}`)).toBe(1);
    expect(got.get(`cachebreak_breaks_total{${SONNET},reason="tools_order_changed"}`)).toBe(1);
    expect(got.get(`cachebreak_breaks_total{${GPT},reason="system_changed"}`)).toBe(1);
    expect(got.get(`cachebreak_tokens_total{${SONNET},kind="cache_read"}`)).toBe(96_900);
    expect(got.get(`cachebreak_tokens_total{${SONNET},kind="cache_write"}`)).toBe(98_400);
    expect(got.get(`cachebreak_missed_cache_read_tokens_total{${SONNET},reason="tools_order_changed"}`)).toBe(48_900);
    expect(got.get(`cachebreak_estimated_extra_cost_usd_total{${SONNET},reason="tools_order_changed"}`)).toBeCloseTo(0.168705, 9);
    expect(got.get('cachebreak_turns_total{project="default",model="my \\"fine-tuned\\" model\\\\v2",provider="anthropic",state="cold"}')).toBe(1);
  });

  it('counters only grow, even while late events re-evaluate turns; tokens add up as in-order delivery', async () => {
    const events = seedSession();
    const inOrder = await startServer();
    expect((await postEvents(inOrder.url, events)).body).toMatchObject({ accepted: 8 });
    // Every usage before its snapshot, one event per request: each turn is
    // first judged without its snapshot, then judged again.
    const usageFirst = await startServer();
    let previous = new Map<string, number>();
    for (let i = 0; i < events.length; i += 2) {
      for (const event of [events[i + 1], events[i]]) {
        expect((await postEvents(usageFirst.url, [event])).status).toBe(200);
        const now = samples(await metrics(usageFirst.url));
        for (const [series, value] of previous) expect(now.get(series), series).toBeGreaterThanOrEqual(value);
        previous = now;
      }
    }
    const final = await metrics(usageFirst.url);
    expect(promtoolCheck(final).status).toBe(0);
    // Tokens are counted once per turn whatever the order; only their model label may lag behind a late snapshot.
    const tokensByKind = (text: string) => {
      const sums: Record<string, number> = {};
      for (const [series, value] of samples(text)) {
        const kind = /^cachebreak_tokens_total\{.*kind="(\w+)"\}$/.exec(series)?.[1];
        if (kind) sums[kind] = (sums[kind] ?? 0) + value;
      }
      return sums;
    };
    expect(tokensByKind(final)).toEqual(tokensByKind(await metrics(inOrder.url)));
  });

  it('counts a usage record waiting for its snapshot in a gauge and in /v1/stats, until the snapshot places it (SPEC §4.11)', async () => {
    const server = await startServer();
    const t0 = Date.now() - 3_600_000;
    const waiting = async () => {
      const text = await metrics(server.url);
      expect(promtoolCheck(text)).toEqual({ status: 0, output: '' });
      expect(text).toContain('# HELP cachebreak_usage_waiting ');
      expect(text).toContain('# TYPE cachebreak_usage_waiting gauge\n');
      const stats = await getJson<{ waitingUsage: number }>(server.url, '/v1/stats');
      return { gauge: samples(text).get('cachebreak_usage_waiting{project="default"}'), stats: stats.waitingUsage };
    };
    // The usage names no session (and, with normalised counts, no provider): no stream can hold it yet.
    expect((await postEvents(server.url, [WAITING_USAGE])).body).toEqual({ accepted: 1, duplicates: 0, rejected: [] });
    expect(await waiting()).toEqual({ gauge: 1, stats: 1 });
    // Sent again, it is a duplicate, not a second record waiting.
    expect((await postEvents(server.url, [WAITING_USAGE])).body).toEqual({ accepted: 0, duplicates: 1, rejected: [] });
    expect(await waiting()).toEqual({ gauge: 1, stats: 1 });

    expect((await postEvents(server.url, [waitingSnapshot(t0)])).body).toEqual({ accepted: 1, duplicates: 0, rejected: [] });
    expect(await waiting()).toEqual({ gauge: 0, stats: 0 });
    // It joined its turn: counted where every turn is.
    const turns = await getJson<{ turns: { requestId: string; usage: { uncached: number } | null }[] }>(server.url, '/v1/sessions/sess_waiting/turns');
    expect(turns.turns.map((t) => [t.requestId, t.usage?.uncached])).toEqual([['w1', 10]]);
  });

  it('never counts an unknown price as $0: breaks of unpriced models add no cost sample', async () => {
    const server = await startServer();
    expect((await postEvents(server.url, mixedWorkload(Date.now() - 3_600_000))).status).toBe(200);
    const text = await metrics(server.url);
    expect(promtoolCheck(text)).toEqual({ status: 0, output: '' });
    expect(text).toContain('# TYPE cachebreak_breaks_unpriced_total counter\n');
    const got = samples(text);
    const unpriced = `project="default",model="${UNPRICED_MODEL}",provider="anthropic",reason="system_changed"`;
    expect(got.get(`cachebreak_breaks_total{${unpriced}}`)).toBe(2);
    expect(got.get(`cachebreak_missed_cache_read_tokens_total{${unpriced}}`)).toBe(60_000);
    expect(got.has(`cachebreak_estimated_extra_cost_usd_total{${unpriced}}`)).toBe(false);
    expect(got.get(`cachebreak_estimated_extra_cost_usd_total{${SONNET},reason="tools_order_changed"}`)).toBeCloseTo(0.168705, 9);
    // Every series of breaks has its unpriced series, at 0 until an unpriced break counts: increase() sees the first one.
    expect(got.get(`cachebreak_breaks_unpriced_total{${SONNET},reason="tools_order_changed"}`)).toBe(0);
    expect(got.get(`cachebreak_breaks_unpriced_total{${unpriced}}`)).toBe(2);
  });
});
