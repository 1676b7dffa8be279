// The Alerts page in headless Chromium (Debian's) against a real server
// whose rules fired: reached from the navigation, the firing alert listed,
// readable in light and dark at 1280 and 700 px without sideways scrolling.
// Screenshots go to test-results/ui/.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REORDERED_TOOLS, seedSession, T0, type Step } from '../e2e/events.js';
import { until, type Json } from '../e2e/prometheus.js';
import { getJson, postEvents, startServer, type ServerProcess } from '../e2e/server.js';
import { launchBrowser, noSidewaysScroll, openPage, shoot } from './browser.js';

let browser: Browser;
let server: ServerProcess;

beforeAll(async () => {
  [browser, server] = await Promise.all([
    launchBrowser(),
    startServer({ lifetime: 'file', args: ['--alert-cache-rate-below', '0.5', '--alert-min-turns', '3', '--alert-every', '1s', '--alert-new-reason'] }),
  ]);
  // Two minutes ago: a cold start and two breaks, nothing read from the cache.
  const start = Math.floor((Date.now() - 120_000 - T0) / 1000);
  const steps: Step[] = [
    { requestId: 'a1', at: start, read: 0, write: 30_000 },
    { requestId: 'a2', at: start + 5, tools: REORDERED_TOOLS, read: 0, write: 30_000 },
    { requestId: 'a3', at: start + 10, read: 0, write: 30_000 },
  ];
  expect((await postEvents(server.url, seedSession('sess_alerts', steps))).status).toBe(200);
  await until('the cache rate alert firing', 20_000, async () => ((await getJson<Json>(server.url, '/v1/alerts?state=firing')).alerts.some((a: Json) => a.rule === 'cache_rate_below') ? true : undefined));
}, 60_000);
afterAll(() => browser?.close());

describe('web UI: alerts', () => {
  for (const colorScheme of ['light', 'dark'] as const) {
    for (const width of [1280, 700]) {
      it(`lists the firing alerts and the rules, ${colorScheme}, ${width} px`, { timeout: 60_000 }, async () => {
        const { page, problems } = await openPage(browser, width, colorScheme);
        await page.goto(`${server.url}/`);
        await page.locator('nav a', { hasText: 'Alerts' }).click();
        await page.waitForURL(/\/alerts$/);
        expect(await page.locator('nav a[aria-current="page"]').textContent()).toBe('Alerts');
        expect(await page.locator('#rules').textContent()).toBe('Rules, per project, over the last 1h: cache rate below 50.0 % (once 3 turns); a break reason new to the project.');
        const row = page.locator('#alerts tr.alert-firing', { hasText: 'cache_rate_below' });
        expect(await row.locator('td').allTextContents()).toEqual(['firing', 'cache_rate_below', '0.0 % (below 50.0 %)', expect.stringMatching(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/), '', 'unknown']);
        expect(await page.locator('#alerts tr.alert-firing', { hasText: 'new_break_reason' }).count()).toBeGreaterThan(0);
        // The page's colours come from its variables: light text on a dark page in dark mode.
        const text = await page.evaluate<string>("getComputedStyle(document.body).color");
        expect(text).toBe(colorScheme === 'dark' ? 'rgb(230, 232, 235)' : 'rgb(29, 33, 41)');
        expect(await noSidewaysScroll(page)).toBe(true);
        await shoot(page, `alerts-${colorScheme}-${width}`);
        expect(problems).toEqual([]);
        await page.close();
      });
    }
  }

  it('says how to turn the rules on when none is', { timeout: 60_000 }, async () => {
    const plain = await startServer();
    const page = await browser.newPage();
    await page.goto(`${plain.url}/alerts`);
    expect(await page.locator('#no-rules').textContent()).toContain('No alert rule is on. Start the server with --alert-cache-rate-below');
    expect(await page.locator('#no-alerts').count()).toBe(1);
    await page.close();
  });
});
