// The webhook sender against real receivers on loopback: every attempt
// bounded in time, a bounded number of attempts, failures counted and
// logged, a bounded queue, and nothing sent once closed.
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import type { Alert } from '../../src/alerts/alerts.js';
import { Webhook, WEBHOOK_ATTEMPTS, WEBHOOK_QUEUE, WEBHOOK_TIMEOUT_MS } from '../../src/alerts/webhook.js';
import { Counters } from '../../src/telemetry/counters.js';
import { createLogger } from '../../src/telemetry/logfmt.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

/** A receiver on 127.0.0.1 answering with `answer`; counts the requests. */
async function receiver(answer: (req: IncomingMessage, res: ServerResponse) => void) {
  const bodies: string[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      bodies.push(body);
      answer(req, res);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  closers.push(async () => {
    server.closeAllConnections();
    server.close();
    await once(server, 'close');
  });
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}/`, bodies };
}

function sender(url: string) {
  const counters = new Counters();
  const lines: string[] = [];
  const webhook = new Webhook(url, counters, createLogger((line) => lines.push(line)));
  closers.push(async () => webhook.close());
  return { webhook, counters, lines };
}

const alert = (project = 'web'): Alert => ({ project, rule: 'cache_rate_below', subject: null, state: 'firing', startedMs: Date.parse('2026-12-06T03:00:00Z'), resolvedMs: null, value: 0.2, threshold: 0.5, windowMs: 3_600_000, agentVersion: null });

async function until(what: string, ms: number, check: () => boolean): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('alert webhook', () => {
  it('posts the alert as JSON once when the receiver takes it', async () => {
    const hook = await receiver((_, res) => res.writeHead(200).end());
    const { webhook, counters } = sender(hook.url);
    webhook.send(alert());
    await until('delivered', 5_000, () => hook.bodies.length === 1);
    expect(JSON.parse(hook.bodies[0]!)).toEqual({
      status: 'firing',
      alert: { project: 'web', rule: 'cache_rate_below', subject: null, state: 'firing', value: 0.2, threshold: 0.5, windowMs: 3_600_000, agentVersion: null, startedAt: '2026-12-06T03:00:00.000Z', resolvedAt: null, summary: 'project web: cache rate 20.0% over the last 1h, below 50.0%' },
    });
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(hook.bodies).toHaveLength(1);
    expect(counters.samples().filter((s) => s.name === 'alertWebhookFailures')).toEqual([]);
  });

  it(`tries a receiver that answers 500 ${WEBHOOK_ATTEMPTS} times, then counts and logs the failure`, { timeout: 20_000 }, async () => {
    const hook = await receiver((_, res) => res.writeHead(500).end());
    const { webhook, counters, lines } = sender(hook.url);
    webhook.send(alert());
    await until('counted', 10_000, () => counters.get('alertWebhookFailures', { project: 'web', reason: 'status' }) === 1);
    expect(hook.bodies).toHaveLength(WEBHOOK_ATTEMPTS);
    expect(lines.find((line) => line.includes('alert_webhook_failed'))).toMatch(/project=web .*reason=status message="answered 500, 3 attempts"/);
  });

  it(`cuts each attempt at a receiver that never answers after ${WEBHOOK_TIMEOUT_MS} ms`, { timeout: 40_000 }, async () => {
    const hook = await receiver(() => undefined);
    const { webhook, counters } = sender(hook.url);
    const started = Date.now();
    webhook.send(alert());
    await until('counted', 30_000, () => counters.get('alertWebhookFailures', { project: 'web', reason: 'timeout' }) === 1);
    // Three attempts of 5 s, 1 s and 4 s apart.
    expect(Date.now() - started).toBeGreaterThanOrEqual(WEBHOOK_ATTEMPTS * WEBHOOK_TIMEOUT_MS + 5_000);
    expect(Date.now() - started).toBeLessThan(WEBHOOK_ATTEMPTS * WEBHOOK_TIMEOUT_MS + 5_000 + 5_000);
    expect(hook.bodies).toHaveLength(WEBHOOK_ATTEMPTS);
  });

  it(`keeps at most ${WEBHOOK_QUEUE} waiting, dropping the oldest, and sends nothing once closed`, async () => {
    const hook = await receiver(() => undefined);
    const { webhook, counters } = sender(hook.url);
    for (let i = 0; i < WEBHOOK_QUEUE + 3; i++) webhook.send(alert());
    // One in flight, WEBHOOK_QUEUE waiting: two dropped.
    expect(counters.get('alertWebhookFailures', { project: 'web', reason: 'queue_full' })).toBe(2);
    await until('the first attempt received', 5_000, () => hook.bodies.length === 1);
    webhook.close();
    webhook.send(alert());
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(hook.bodies).toHaveLength(1);
    expect(counters.get('alertWebhookFailures', { project: 'web', reason: 'timeout' })).toBe(0);
  });
});
