// The web UI in headless Chromium (Debian's, which .ci/run installs) against
// a real `cachebreak serve` on 127.0.0.1: every view loads without console
// errors, links lead overview → sessions → session → break, the range picker
// changes the data, a break's diff marks exactly the tools its record names,
// nothing scrolls sideways at 700 px, and keys guard the UI as every read
// route. Screenshots go to test-results/ui/ (docs/ui.png is demo-shot.test.ts's).
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { tempDir } from '../helpers.js';
import { getJson, startServer, type ServerProcess } from '../e2e/server.js';
import { brokenNames, browserAndServer, lightness, noSidewaysScroll, openPage, shoot } from './browser.js';
import { ADDED_TOOL, CHANGED_TOOL, MARKUP_SESSION, MOVED_TOOLS, OLD_SESSION, TOOLS_SESSION, UNCHANGED_TOOL, uiWorkload } from './workload.js';

let browser: Browser;
let server: ServerProcess;

beforeAll(async () => {
  ({ browser, server } = await browserAndServer(uiWorkload(Date.now())));
}, 60_000);
afterAll(() => browser?.close());

const cell = (page: Page, label: string) => page.locator('.number', { hasText: label }).locator('.value');

describe('web UI', () => {
  it('walks overview → sessions → session → break, every view drawn without errors', { timeout: 90_000 }, async () => {
    const { page, problems } = await openPage(browser);
    await page.goto(`${server.url}/`);
    expect(await page.locator('.range').innerText()).toContain('Range: last 24 hours (the default)');
    // uPlot drew both charts: the rate line and the bars by reason.
    await page.locator('#cache-rate canvas').waitFor();
    await page.locator('#breaks-by-reason canvas').waitFor();
    expect(await page.locator('#breaks-by-reason .u-legend .u-series').allInnerTexts()).toEqual(
      expect.arrayContaining([expect.stringContaining('system_changed'), expect.stringContaining('tools_schema_changed')]),
    );
    // Priced sum with the unpriced counted apart, never $0.
    expect(await cell(page, 'estimated extra cost').innerText()).toMatch(/^\$0\.\d{4}\n\+ 2 unpriced$/);
    expect(await page.locator('#reasons tr', { hasText: 'system_changed' }).innerText()).toContain('unknown (2 unpriced)');
    expect(await page.locator('.waiting').innerText()).toContain('1 usage record waits');
    await shoot(page, 'overview');

    await page.getByRole('link', { name: 'Sessions' }).click();
    await page.waitForURL(/\/sessions$/);
    expect(await page.locator('#sessions').innerText()).toContain(TOOLS_SESSION);
    // The markup session id shows as text; opening the list ran none of it (no dialog below).
    expect(await page.locator('#sessions code', { hasText: MARKUP_SESSION }).count()).toBe(1);
    await shoot(page, 'sessions');

    await page.locator('#sessions a', { hasText: TOOLS_SESSION }).click();
    await page.waitForURL(new RegExp(`/sessions/${TOOLS_SESSION}$`));
    // One chart per stream (main and the subagent), with read / write / uncached series.
    expect(await page.locator('.stream h2').allInnerTexts()).toEqual([expect.stringMatching(/^Agent main/), expect.stringMatching(/^Agent subagent-1/)]);
    await page.locator('#stream-0 canvas').waitFor();
    expect(await page.locator('#stream-0 .u-legend .u-series').allInnerTexts()).toEqual(
      expect.arrayContaining([expect.stringContaining('cache read'), expect.stringContaining('cache write'), expect.stringContaining('uncached')]),
    );
    await shoot(page, 'session');

    await page.locator('.stream').first().locator('table.breaks a').click();
    await page.waitForURL(/\/breaks\/t3$/);
    await shoot(page, 'break');

    // The markup session's page too.
    await page.goto(`${server.url}/sessions/${encodeURIComponent(MARKUP_SESSION)}`);
    expect(await page.locator('main h2').first().innerText()).toContain(MARKUP_SESSION);
    expect(problems).toEqual([]);
    await page.close();
  });

  it("marks exactly what the break record names: tools added, moved and changed on each side, a system block, a parameter; the rest plain", { timeout: 60_000 }, async () => {
    const { page, problems } = await openPage(browser);
    await page.goto(`${server.url}/breaks/t3`);
    const marked = async (side: number, kind: string) =>
      page.locator('#tools .side').nth(side).locator(`li.${kind}`).evaluateAll((items) => items.map((li) => li.getAttribute('data-tool')));
    const record = (await getJson<{ break: { toolChanges: Record<string, string[]> } }>(server.url, '/v1/breaks/t3')).break.toolChanges;
    expect(record).toEqual({ added: [ADDED_TOOL], removed: [], schemaChanged: [CHANGED_TOOL], moved: [...MOVED_TOOLS].sort() });
    // Baseline: nothing was removed; the swapped two moved; one schema changed.
    expect(await marked(0, 'removed')).toEqual([]);
    expect((await marked(0, 'moved')).sort()).toEqual([...MOVED_TOOLS].sort());
    expect(await marked(0, 'changed')).toEqual([CHANGED_TOOL]);
    // This turn: the added tool, the two moved in their new order, the changed schema.
    expect(await marked(1, 'added')).toEqual([ADDED_TOOL]);
    expect(await marked(1, 'moved')).toEqual([...MOVED_TOOLS].reverse());
    expect(await marked(1, 'changed')).toEqual([CHANGED_TOOL]);
    expect(await page.locator(`#tools .side li[data-tool="${UNCHANGED_TOOL}"]:not([class])`).count()).toBe(2);
    // The idle gap against the declared TTL, and the verdicts side by side.
    expect(await page.locator('#gap').innerText()).toMatch(/Idle 20s since the baseline; TTL 5m \(declared\): within the TTL\./);
    expect(await page.locator('#verdicts tr', { hasText: 'harness' }).innerText()).toContain('no report');

    // A system block changed: that block alone is marked on both sides.
    await page.goto(`${server.url}/breaks/u2`);
    expect(await page.locator('#system .side').nth(0).locator('li.changed').count()).toBe(1);
    expect(await page.locator('#system .side').nth(1).locator('li').evaluateAll((items) => items.map((li) => li.className))).toEqual(['', 'changed']);

    // A parameter changed: its row alone is marked, both hashes shown.
    await page.goto(`${server.url}/breaks/q2`);
    expect(await page.locator('#params tr.changed td:first-child code').allInnerTexts()).toEqual(['thinking']);
    expect(await page.locator('#params tbody tr:not(.changed) td:first-child code').allInnerTexts()).toEqual(['toolChoice']);
    expect(await page.locator('#params tr.changed td:not(:first-child) code').count()).toBe(2);
    expect(problems).toEqual([]);
    await page.close();
  });

  it('changes every view with the range picker, the range carried by links and kept in the URL', { timeout: 60_000 }, async () => {
    const { page, problems } = await openPage(browser);
    await page.goto(`${server.url}/`);
    const dayTurns = Number((await cell(page, 'turns').innerText()).replace(/,/g, ''));
    await page.locator('.range a', { hasText: '7d' }).click();
    await page.waitForURL(/\?range=7d$/);
    // The three-day-old session's two turns and its break join the figures.
    expect(Number((await cell(page, 'turns').innerText()).replace(/,/g, ''))).toBe(dayTurns + 2);
    expect(await page.locator('#latest-breaks').innerText()).toContain(OLD_SESSION);
    await page.getByRole('link', { name: 'Sessions' }).click();
    await page.waitForURL(/\/sessions\?range=7d$/);
    expect(await page.locator('#sessions').innerText()).toContain(OLD_SESSION);
    // Sorting keeps the range.
    await page.locator('nav.sort a', { hasText: 'extra cost' }).click();
    await page.waitForURL(/\/sessions\?range=7d&order=extra_cost$/);
    expect(await page.locator('#sessions tbody tr td:nth-child(2)').first().innerText()).toBe(TOOLS_SESSION);
    expect(await page.locator('nav.sort a[aria-current]').innerText()).toBe('extra cost');
    await page.locator('nav.sort a', { hasText: 'cache rate' }).click();
    await page.waitForURL(/order=worst_cache_rate$/);
    // Search by agent finds the one session with a subagent.
    await page.getByLabel('search sessions').fill('subagent');
    await page.getByLabel('search sessions').press('Enter');
    await page.waitForURL(/q=subagent/);
    expect(await page.locator('#sessions tbody tr').count()).toBe(1);
    await shoot(page, 'sessions-search');

    // The default range leaves the old session out, and says so.
    await page.goto(`${server.url}/sessions`);
    expect(await page.locator('#sessions').innerText()).not.toContain(OLD_SESSION);
    // A custom from/to: around the old session alone.
    const oldFrom = new Date(Date.now() - 4 * 86_400_000).toISOString();
    const oldTo = new Date(Date.now() - 2 * 86_400_000).toISOString();
    await page.getByLabel('from').fill(oldFrom);
    await page.getByLabel('to', { exact: true }).fill(oldTo);
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.waitForURL(/\/sessions\?from=.*&to=/);
    expect(new URL(page.url()).searchParams.get('from')).toBe(oldFrom);
    expect(await page.locator('.range').innerText()).toContain('custom range');
    expect(await page.locator('#sessions tbody tr').count()).toBe(1);
    expect(await page.locator('#sessions').innerText()).toContain(OLD_SESSION);
    // The overview in that range shows the old break, linked with the range.
    await page.getByRole('link', { name: 'Overview' }).click();
    expect(await page.locator('#latest-breaks tbody tr').count()).toBe(1);
    expect(await page.locator('#latest-breaks a').first().getAttribute('href')).toBe(`/breaks/o2?from=${encodeURIComponent(oldFrom)}&to=${encodeURIComponent(oldTo)}`);
    expect(problems).toEqual([]);
    await page.close();
  });

  it('shows the insights with each break one click away', { timeout: 60_000 }, async () => {
    const { page, problems } = await openPage(browser);
    await page.goto(`${server.url}/`);
    await page.locator('nav a', { hasText: 'Insights' }).click();
    await page.waitForURL(/\/insights/);
    for (const id of ['avoidable', 'volatile', 'fanout', 'ttl', 'chronic', 'confusion']) await page.locator(`#${id}-summary`).waitFor();
    // The moved and changed tools of the tools session are volatile parts; the latest break that changed one opens its page.
    const part = page.locator('#volatile tr', { hasText: CHANGED_TOOL });
    await part.locator('a').click();
    await page.waitForURL(/\/breaks\//);
    expect(await page.locator('h2').first().innerText()).toMatch(/break/i);
    await shoot(page, 'insights');
    expect(problems).toEqual([]);
    await page.close();
  });

  /** Every view of the navigation, and the pages it leads to. */
  const VIEWS = [
    ['overview', '/?range=7d'],
    ['overview-all', '/?range=all'],
    ['sessions', '/sessions?range=7d'],
    ['session', `/sessions/${TOOLS_SESSION}`],
    ['breaks', '/breaks?range=7d'],
    ['break', '/breaks/t3'],
    ['causes', '/causes?range=7d'],
    ['insights', '/insights?range=7d'],
    ['alerts', '/alerts'],
  ] as const;
  for (const scheme of ['light', 'dark'] as const) {
    for (const width of [1280, 700]) {
      it(`draws every view readable in ${scheme} at ${width} px, none scrolling sideways`, { timeout: 60_000 }, async () => {
        const { page, problems } = await openPage(browser, width, scheme);
        for (const [name, path] of VIEWS) {
          await page.goto(`${server.url}${path}`);
          expect(await noSidewaysScroll(page), name).toBe(true);
          expect(await brokenNames(page, 'main'), name).toEqual([]);
          // The text follows the scheme, far from its background.
          const [fg, bg] = await page.evaluate<string[]>('[getComputedStyle(document.body).color, getComputedStyle(document.documentElement).backgroundColor]');
          expect(lightness(fg!) > 128, name).toBe(scheme === 'dark');
          expect(Math.abs(lightness(fg!) - lightness(bg!)), name).toBeGreaterThan(120);
          await shoot(page, `${name}-${scheme}-${width}`);
        }
        expect(problems).toEqual([]);
        await page.close();
      });
    }
  }

  it('asks for a key where keys exist, and shows only the key\'s project', { timeout: 60_000 }, async () => {
    const db = join(tempDir(), 'keys.db');
    let key = '';
    const code = await main(['keys', 'create', '--db', db, '--project', 'alpha', '--scope', 'read'], { stdout: (t) => (key += t), stderr: () => {}, env: {}, interactive: false });
    expect(code).toBe(0);
    const locked = await startServer({ db });
    for (const path of ['/', '/sessions', '/ui/uplot.js']) {
      const response = await fetch(`${locked.url}${path}`);
      expect(response.status, path).toBe(401);
      expect(response.headers.get('www-authenticate')).toBe('Basic realm="cachebreak", charset="UTF-8"');
    }
    // A browser gives the key as the Basic password, for the page and its assets alike.
    const context = await browser.newContext({ httpCredentials: { username: 'key', password: key.trim() } });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`${locked.url}/`);
    expect(await page.locator('header').innerText()).toContain('project alpha');
    // A project with no data yet says what to do.
    expect(await page.locator('#empty').innerText()).toContain('No turns in the last 24 hours');
    await page.locator('#cache-rate canvas').waitFor();
    expect(errors).toEqual([]);
    await context.close();
  });

  it('serves uPlot and its own script from the package with caching headers', async () => {
    for (const [asset, type] of [['uplot.js', 'text/javascript'], ['uplot.css', 'text/css'], ['ui.js', 'text/javascript']] as const) {
      const response = await fetch(`${server.url}/ui/${asset}`);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toContain(type);
      expect(response.headers.get('cache-control')).toBe('private, max-age=86400');
    }
    expect(await (await fetch(`${server.url}/ui/uplot.js`)).text()).toContain('uPlot');
    expect((await fetch(`${server.url}/ui/nothing.js`)).status).toBe(404);
  });
});
