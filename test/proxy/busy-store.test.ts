// Writing the main port's ingest does not hold up the calls streaming
// through the proxy: a server that proxies writes in a thread of its own, so
// while a large group of events is joined, judged and written, proxied calls
// go on being answered. (Made on the main thread, the write held every call
// for its whole length.)
import { describe, expect, it } from 'vitest';
import { toWire, turn, usage } from '../core/scenario.js';
import { send } from './client.js';
import { startProxyHarness } from './harness.js';

/** Requests of the main port at once: written together, as one group (of 20,000 events at most). */
const BATCHES = 2;
/** Turns per request: --max-events' default (7 MB). */
const TURNS = 10_000;

function batch(n: number): string {
  return Array.from({ length: TURNS }, (_, i) =>
    JSON.stringify(toWire(turn(`b${n}_${i}`, { sessionId: `sess_${n}_${i % 100}`, at: i * 1_000, usage: usage(48_000, 500) }))),
  ).join('\n');
}

describe('the proxy while the main port ingests', () => {
  it('answers calls all along the write of a large group of events', async () => {
    const h = await startProxyHarness({ bodyLimit: 16 * 1024 * 1024, writeThread: true });
    const bodies = Array.from({ length: BATCHES }, (_, n) => batch(n));
    const call = JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 50, stream: true, messages: [{ role: 'user', content: 'hi' }] });

    const answered: number[] = [];
    let calling = true;
    const caller = (async () => {
      while (calling) {
        const answer = await send(h.proxy, 'POST', '/anthropic/v1/messages', { 'x-cachebreak-session': 'calls' }, call);
        expect(answer.status).toBe(200);
        answered.push(performance.now());
      }
    })();
    const rate = (from: number, to: number) => (answered.filter((at) => at > from && at <= to).length * 1000) / (to - from);

    // The calls' rate with nothing else to do, then while both requests are read, written and answered.
    const idleFrom = performance.now();
    await new Promise((resolve) => setTimeout(resolve, 500));
    const started = performance.now();
    const answers = await Promise.all(
      bodies.map((body) => fetch(`${h.server.url}/v1/events`, { method: 'POST', headers: { 'content-type': 'application/x-ndjson' }, body })),
    );
    const ended = performance.now();
    calling = false;
    await caller;
    for (const answer of answers) expect(await answer.json()).toMatchObject({ accepted: TURNS, rejected: [] });

    // Reading the requests holds the calls (their JSON is parsed on the main thread). Writing them held the calls
    // too, when it was done there: under 1 % of the idle rate got through. In the write thread, half of it does.
    expect(rate(started, ended)).toBeGreaterThan(rate(idleFrom, started) / 10);
  });
});
