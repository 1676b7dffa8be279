// The server's regression alerts end to end: a real server evaluating its
// rules every second, events whose cache rate drops below the threshold, a
// real webhook receiver on loopback that gets the firing alert and, once the
// rate recovers, the resolved one; GET /v1/alerts and the /alerts page show
// them. Run against SQLite and PostgreSQL.
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { REORDERED_TOOLS, seedSession, T0, type Step } from './events.js';
import { until, type Json } from './prometheus.js';
import { getJson, postEvents, request, startServer } from './server.js';

interface Received {
  status: string;
  alert: Json;
}

const receivers: Server[] = [];
afterEach(async () => {
  for (const server of receivers.splice(0)) {
    server.closeAllConnections();
    server.close();
    await once(server, 'close');
  }
});

/** A webhook receiver on 127.0.0.1 that keeps every JSON body posted to it. */
async function receiver(): Promise<{ url: string; received: Received[] }> {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      received.push(JSON.parse(body) as Received);
      res.writeHead(204).end();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  receivers.push(server);
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}/hook`, received };
}

/** Seconds after T0 of `ms` ago: the steps' `at`, so that they fall in the last minutes. */
const secondsAgo = (ms: number) => Math.floor((Date.now() - ms - T0) / 1000);

const RULES = ['--alert-cache-rate-below', '0.5', '--alert-min-turns', '3', '--alert-window', '10m', '--alert-every', '1s', '--alert-new-reason'];

describe('regression alerts', () => {
  it('fire to the webhook when the cache rate drops, show in /v1/alerts and /alerts, and resolve when it recovers', { timeout: 90_000 }, async () => {
    const hook = await receiver();
    const server = await startServer({ args: [...RULES, '--alert-extra-cost-above', '1', '--alert-webhook', hook.url] });
    expect((await getJson<Json>(server.url, '/v1/alerts')).rules).toEqual({ cacheRateBelow: 0.5, extraCostAbove: 1, newBreakReason: true, window: '10m', minTurns: 3 });

    // Five minutes ago: a cold start, then two breaks (the tool order changed, then back): nothing read from the cache.
    const start = secondsAgo(5 * 60_000);
    const drop: Step[] = [
      { requestId: 'req_01', at: start, read: 0, write: 40_000 },
      { requestId: 'req_02', at: start + 5, tools: REORDERED_TOOLS, read: 0, write: 40_000 },
      { requestId: 'req_03', at: start + 10, read: 0, write: 40_000 },
    ];
    // Sent by an agent that names its version: the alerts name it as the version where the change began.
    const versioned = seedSession('sess_drop', drop).map((event) => ({ ...event, agentVersion: '2.1.332' }));
    expect((await postEvents(server.url, versioned)).status).toBe(200);

    const firing = await until('the firing cache rate alert at the webhook', 20_000, async () => hook.received.find((r) => r.status === 'firing' && r.alert.rule === 'cache_rate_below'));
    expect(firing.alert).toMatchObject({ project: 'default', state: 'firing', subject: null, value: 0, threshold: 0.5, windowMs: 600_000, agentVersion: '2.1.332', resolvedAt: null });
    expect(Date.parse(firing.alert.startedAt)).toBeGreaterThan(Date.now() - 30_000);
    expect(firing.alert.summary).toBe('project default: cache rate 0.0% over the last 10m, below 50.0%');
    // The breaks' reasons were never seen in the project before.
    const reasons = await until('the new reason alerts at the webhook', 20_000, async () => {
      const found = hook.received.filter((r) => r.alert.rule === 'new_break_reason').map((r) => r.alert.subject as string);
      return found.length > 0 ? found : undefined;
    });
    expect(reasons.every((subject) => /^tools_/.test(subject))).toBe(true);
    expect(hook.received.filter((r) => r.alert.rule === 'new_break_reason').map((r) => r.alert.agentVersion)).toEqual(reasons.map(() => '2.1.332'));
    // Two breaks of 40,000 tokens written instead of read at Claude Sonnet 4.5's prices ($3.75 and $0.30 per MTok): $0.276 in 10 minutes, $1.656 an hour.
    const cost = await until('the extra cost alert at the webhook', 20_000, async () => hook.received.find((r) => r.alert.rule === 'extra_cost_above'));
    expect(cost.alert).toMatchObject({ state: 'firing', threshold: 1, agentVersion: '2.1.332', summary: 'project default: breaks cost an estimated $1.66 extra per hour over the last 10m, above $1.00' });
    expect(cost.alert.value).toBeCloseTo(1.656, 6);

    const listed = await getJson<Json>(server.url, '/v1/alerts?state=firing');
    expect(listed.alerts.map((a: Json) => a.rule).sort()).toEqual(['cache_rate_below', 'extra_cost_above', ...reasons.map(() => 'new_break_reason')].sort());
    const page = await request(server.url, '/alerts');
    expect(page.status).toBe(200);
    expect(page.text).toContain('<tr class="alert-firing"><td><strong>firing</strong></td><td><span class="wrap">cache_<wbr>rate_<wbr>below</span></td><td class="n">0.0 % (below 50.0 %)</td>');

    // Then the same stream reads its prefix back, ten times: the window's rate rises above half.
    const recovery: Step[] = Array.from({ length: 10 }, (_, i) => ({ requestId: `req_${10 + i}`, at: start + 20 + 5 * i, read: 40_000, write: 100 }));
    expect((await postEvents(server.url, seedSession('sess_drop', recovery))).status).toBe(200);
    const resolved = await until('the resolved cache rate alert at the webhook', 20_000, async () => hook.received.find((r) => r.status === 'resolved' && r.alert.rule === 'cache_rate_below'));
    expect(resolved.alert.state).toBe('resolved');
    expect(resolved.alert.value).toBeGreaterThan(0.5);
    expect(Date.parse(resolved.alert.resolvedAt)).toBeGreaterThanOrEqual(Date.parse(firing.alert.startedAt));
    // Sent once each: the alert fired once and resolved once.
    expect(hook.received.filter((r) => r.alert.rule === 'cache_rate_below').map((r) => r.status)).toEqual(['firing', 'resolved']);
    const after = await getJson<Json>(server.url, '/v1/alerts');
    expect(after.alerts.find((a: Json) => a.rule === 'cache_rate_below')).toMatchObject({ state: 'resolved', startedAt: firing.alert.startedAt, resolvedAt: resolved.alert.resolvedAt });
    expect((await getJson<Json>(server.url, '/v1/alerts?state=firing')).alerts.some((a: Json) => a.rule === 'cache_rate_below')).toBe(false);
  });

  it('counts and logs a webhook that does not answer, and refuses an unknown state', { timeout: 60_000 }, async () => {
    // A port that nothing listens on any more.
    const closed = await receiver();
    const server = receivers.pop()!;
    server.close();
    await once(server, 'close');
    const running = await startServer({ args: [...RULES, '--alert-webhook', closed.url] });
    const start = secondsAgo(60_000);
    const cold: Step[] = [0, 5, 10].map((offset, i) => ({ requestId: `req_${i}`, at: start + offset, read: 0, write: 30_000, tools: i === 1 ? REORDERED_TOOLS : undefined }));
    expect((await postEvents(running.url, seedSession('sess_cold', cold))).status).toBe(200);
    // Three attempts, 1 s and 4 s apart, for each notification.
    const failures = await until('the webhook failure counted', 30_000, async () => {
      const match = /^cachebreak_alert_webhook_failures_total\{project="default",reason="unreachable"\} (\d+)$/m.exec((await request(running.url, '/metrics')).text);
      return match ? Number(match[1]) : undefined;
    });
    expect(failures).toBeGreaterThanOrEqual(1);
    expect(running.stderrLines.some((line) => line.includes('alert_webhook_failed') && line.includes('reason=unreachable'))).toBe(true);
    // The alert stands whatever the webhook did.
    expect((await getJson<Json>(running.url, '/v1/alerts?state=firing')).alerts.some((a: Json) => a.rule === 'cache_rate_below')).toBe(true);
    const bad = await request(running.url, '/v1/alerts?state=open');
    expect(bad.status).toBe(400);
    expect((bad.body as Json).error.message).toBe('state: expected one of firing, resolved, got "open"');
  });
});
