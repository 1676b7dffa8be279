// "Open trace" on a break page, in headless Chromium (Debian's) against a
// real `cachebreak serve --trace-link` on 127.0.0.1: the break of a turn sent
// with a trace and span shows the link, and following it opens the tracer's
// page (a stand-in tracer on loopback) in a new tab with the turn's ids; a
// break without them shows none. Screenshot in test-results/ui/.
import { once } from 'node:events';
import { mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MINUTE, SEED_TOOLS, toWire, tools, turn, usage } from '../core/scenario.js';
import { postEvents, startServer, type ServerProcess } from '../e2e/server.js';

const SHOTS = join(process.cwd(), 'test-results', 'ui');
const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN = '00f067aa0ba902b7';

let browser: Browser;
let server: ServerProcess;
let tracer: Server;
const opened: string[] = [];

/** Two turns of a session, the second re-ordering the tools (a break) and naming `origin`. */
function session(sessionId: string, now: number, origin: Record<string, string>): unknown[] {
  const at = now - 10 * MINUTE - Date.parse('2026-11-30T10:00:00.000Z');
  return [
    toWire(turn(`${sessionId}-1`, { sessionId, at, usage: usage(48_900, 400) })),
    { ...toWire(turn(`${sessionId}-2`, { sessionId, at: at + MINUTE, tools: tools([...SEED_TOOLS].reverse()), usage: usage(0, 49_300) })), ...origin },
  ];
}

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  tracer = createServer((req, res) => {
    opened.push(req.url ?? '');
    res.writeHead(200, { 'content-type': 'text/html' }).end('<title>tracer</title>');
  });
  tracer.listen(0, '127.0.0.1');
  await once(tracer, 'listening');
  const template = `http://127.0.0.1:${(tracer.address() as { port: number }).port}/trace/{traceId}?span={spanId}&session={sessionId}`;
  [browser, server] = await Promise.all([
    chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-background-networking'] }),
    startServer({ lifetime: 'file', args: ['--trace-link', template] }),
  ]);
  const now = Date.now();
  const events = [...session('sess traced', now, { traceId: TRACE, spanId: SPAN, agentVersion: '2.1.332' }), ...session('sess-bare', now, {})];
  expect((await postEvents(server.url, { events })).body).toMatchObject({ accepted: events.length, rejected: [] });
}, 60_000);
afterAll(async () => {
  await browser?.close();
  tracer?.close();
});

describe('the break page\'s trace link', () => {
  it('opens the turn\'s trace in the tracer, in a new tab', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(`${server.url}/breaks/${encodeURIComponent('sess traced-2')}`);
    const link = page.locator('#trace-link');
    await expect(link.textContent()).resolves.toBe('Open trace');
    expect(await link.getAttribute('rel')).toBe('noopener');
    expect(await page.locator('body').textContent()).toContain('version 2.1.332');
    await page.screenshot({ path: join(SHOTS, 'break-trace-link.png'), fullPage: true });
    const [tab] = await Promise.all([page.context().waitForEvent('page'), link.click()]);
    await tab.waitForLoadState();
    expect(await tab.title()).toBe('tracer');
    // The browser asks the tracer for its favicon too.
    expect(opened.filter((url) => url.startsWith('/trace/'))).toEqual([`/trace/${TRACE}?span=${SPAN}&session=sess%20traced`]);
    await page.context().close();
  });

  it('is absent from a break whose turn had no trace', async () => {
    const page = await browser.newPage();
    await page.goto(`${server.url}/breaks/sess-bare-2`);
    await expect(page.locator('h2').first().textContent()).resolves.toContain('sess-bare-2');
    expect(await page.locator('#trace-link').count()).toBe(0);
    await page.context().close();
  });
});
