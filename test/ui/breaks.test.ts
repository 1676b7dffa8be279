// The breaks explorer in headless Chromium (Debian's) against a real
// `cachebreak serve` on 127.0.0.1: rows, filters that narrow them, the order
// by extra cost, pages that reach a long session's 25th break and beyond,
// rows that open their break page, the overview's cost table leading to its
// breaks, and a mistake answered as a page; light and dark, 1280 and 700 px.
// Screenshots go to test-results/ui/.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashString } from '../../src/core/hash.js';
import { getJson, type ServerProcess } from '../e2e/server.js';
import { toWire, turn, usage } from '../core/scenario.js';
import { brokenNames, browserAndServer, lightness, noSidewaysScroll, openPage, shoot } from './browser.js';
import { CHANGED_TOOL, TOOLS_SESSION, uiWorkload } from './workload.js';

/** A session whose system prompt changes every turn: more breaks than one page holds. */
const LONG_SESSION = 'sess_long_running';
const LONG_BREAKS = 26;

function longSession(now: number): unknown[] {
  const t0 = now - 2 * 3_600_000;
  return Array.from({ length: LONG_BREAKS + 1 }, (_, i) =>
    toWire(
      turn(`long-${String(i).padStart(2, '0')}`, {
        sessionId: LONG_SESSION,
        ts: t0 + i * 20_000,
        endTs: t0 + i * 20_000 + 4_000,
        systemBlockHashes: [hashString('billing'), hashString(`version ${i}`)],
        usage: usage(0, 10_000 + ((i * 7) % 30) * 1_000),
      }),
    ),
  );
}

let browser: Browser;
let server: ServerProcess;

beforeAll(async () => {
  const now = Date.now();
  ({ browser, server } = await browserAndServer([...uiWorkload(now), ...longSession(now)]));
}, 60_000);
afterAll(() => browser?.close());

const rowIds = (page: Page) => page.locator('#breaks tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-request')));
/** The extra cost column in dollars, unknown prices as null. */
const rowCosts = async (page: Page) =>
  (await page.locator('#breaks tbody tr td:last-child').allInnerTexts()).map((t) => (t.startsWith('$') ? Number(t.slice(1)) : null));

describe('breaks explorer', () => {
  for (const scheme of ['light', 'dark'] as const) {
    for (const width of [1280, 700]) {
      it(`shows every break, readable and without sideways scroll (${scheme}, ${width} px)`, { timeout: 60_000 }, async () => {
        const { page, problems } = await openPage(browser, width, scheme);
        await page.goto(`${server.url}/breaks`);
        expect(await page.locator('nav a[aria-current="page"]').innerText()).toBe('Breaks');
        expect(await page.locator('#breaks tbody tr').count()).toBe(20);
        expect(await page.locator('.pager').innerText()).toContain('breaks 1–20');
        // The text follows the scheme: light on dark, dark on light.
        const [fg, bg] = await page.evaluate<string[]>('[getComputedStyle(document.body).color, getComputedStyle(document.documentElement).backgroundColor]');
        if (scheme === 'dark') expect(lightness(fg!)).toBeGreaterThan(180);
        else expect(lightness(fg!)).toBeLessThan(80);
        expect(Math.abs(lightness(fg!) - lightness(bg!))).toBeGreaterThan(120);
        expect(await noSidewaysScroll(page)).toBe(true);
        expect(await page.locator('#breaks .nm').count()).toBeGreaterThan(20);
        expect(await brokenNames(page, '#breaks')).toEqual([]);
        await shoot(page, `breaks-${scheme}-${width}`);

        expect(problems).toEqual([]);

        // A mistake in the URL: a page in the same style, naming it (Chromium logs the 400 itself).
        const response = await page.goto(`${server.url}/breaks?reason=no_such_reason`);
        expect(response?.status()).toBe(400);
        expect(await page.locator('#error-status').innerText()).toBe('400 · Bad request');
        expect(await page.locator('#error-message').innerText()).toContain('reason: expected one of');
        expect(await noSidewaysScroll(page)).toBe(true);
        await shoot(page, `breaks-error-${scheme}-${width}`);
        await page.close();
      });
    }
  }

  it('narrows the rows by session, changed tool and reason; sorts them by extra cost', { timeout: 60_000 }, async () => {
    const { page, problems } = await openPage(browser, 1280, 'light');
    await page.goto(`${server.url}/breaks`);
    const everyRow = await rowIds(page);
    await page.getByLabel('session').fill(TOOLS_SESSION);
    await page.getByRole('button', { name: 'Apply' }).last().click();
    await page.waitForURL(/sessionId=/);
    expect(await rowIds(page)).toEqual(['t3']);

    await page.goto(`${server.url}/breaks`);
    await page.getByLabel('changed tool').fill(CHANGED_TOOL);
    await page.getByRole('button', { name: 'Apply' }).last().click();
    await page.waitForURL(/toolName=/);
    const withTool = await rowIds(page);
    expect(withTool).toContain('t3');
    expect(withTool.length).toBeLessThan(everyRow.length);
    for (const tools of await page.locator('#breaks tbody tr td:nth-child(5)').allInnerTexts()) expect(tools).toContain(CHANGED_TOOL);

    await page.goto(`${server.url}/breaks`);
    await page.getByLabel('reason').selectOption('system_changed');
    await page.getByLabel('sort').selectOption('extra_cost');
    await page.getByRole('button', { name: 'Apply' }).last().click();
    await page.waitForURL(/order=extra_cost/);
    expect(new Set(await page.locator('#breaks .reason').allInnerTexts())).toEqual(new Set(['system_changed']));
    const costs = await rowCosts(page);
    const priced = costs.filter((c) => c !== null) as number[];
    expect(priced.length).toBeGreaterThan(5);
    expect(priced).toEqual([...priced].sort((a, b) => b - a));
    // Unknown prices come after every priced break, never in between.
    expect(costs.slice(0, priced.length)).toEqual(priced);
    expect(await page.locator('h2').first().innerText()).toBe('Breaks, most extra cost first');
    await shoot(page, 'breaks-by-cost');
    expect(problems).toEqual([]);
    await page.close();
  });

  it("pages through a long session's breaks to the 25th row and beyond, and opens it", { timeout: 60_000 }, async () => {
    const { page, problems } = await openPage(browser, 1280, 'light');
    await page.goto(`${server.url}/breaks?sessionId=${LONG_SESSION}`);
    const first = await rowIds(page);
    expect(first).toHaveLength(20);
    expect(await page.locator('a[rel=prev]').count()).toBe(0);
    await page.locator('a[rel=next]').click();
    await page.waitForURL(/cursor=/);
    expect(await page.locator('.pager').innerText()).toContain(`breaks 21–${LONG_BREAKS}`);
    const second = await rowIds(page);
    expect(second).toHaveLength(LONG_BREAKS - 20);
    expect(second.filter((id) => first.includes(id))).toEqual([]);
    // Newest first: the second page holds the session's earliest breaks, down to its first (turn 01).
    expect(second.at(-1)).toBe('long-01');
    expect(await page.locator('a[rel=next]').count()).toBe(0);
    await shoot(page, 'breaks-page-2');
    await page.locator('a[rel=prev]').click();
    await page.waitForURL((url) => !url.searchParams.has('cursor'));
    expect(await rowIds(page)).toEqual(first);
    await page.locator('a[rel=next]').click();
    await page.waitForURL(/cursor=/);
    // The 25th row: the session's second break (turn 02), which opens its page.
    const twentyFifth = second[4]!;
    expect(twentyFifth).toBe('long-02');
    await page.locator(`#breaks tr[data-request="${twentyFifth}"] td:first-child a`).click();
    await page.waitForURL(new RegExp(`/breaks/${twentyFifth}$`));
    expect(await page.locator('main h2').first().innerText()).toContain(twentyFifth);
    expect(problems).toEqual([]);
    await page.close();
  });

  it("leads from the overview's cost table, most costly reason first, to that reason's breaks", { timeout: 60_000 }, async () => {
    const { page, problems } = await openPage(browser, 1280, 'light');
    await page.goto(`${server.url}/`);
    const costs = (await page.locator('#reasons tbody tr td:last-child').allInnerTexts()).map((t) => (t.startsWith('$') ? Number(t.slice(1).split(' ')[0]) : null));
    const priced = costs.filter((c) => c !== null) as number[];
    expect(priced.length).toBeGreaterThan(1);
    expect(costs.slice(0, priced.length)).toEqual([...priced].sort((a, b) => b - a));
    const top = await page.locator('#reasons tbody tr').first().locator('td.reason a').innerText();
    await page.locator('#reasons tbody tr').first().locator('td.reason a').click();
    await page.waitForURL(new RegExp(`/breaks\\?reason=${top}&order=extra_cost$`));
    expect(await page.locator('#breaks tbody tr').count()).toBeGreaterThan(0);
    expect(new Set(await page.locator('#breaks .reason').allInnerTexts())).toEqual(new Set([top]));
    await page.goto(`${server.url}/`);
    await page.locator('#all-breaks').click();
    await page.waitForURL(/\/breaks$/);
    expect(problems).toEqual([]);
    await page.close();
  });

  for (const scheme of ['light', 'dark'] as const) {
    for (const width of [1280, 700]) {
      it(`lists the causes, one row for the same cause in every break, and opens a cause's breaks (${scheme}, ${width} px)`, { timeout: 60_000 }, async () => {
        const long = await getJson<{ breaks: { fingerprint: string }[] }>(server.url, `/v1/breaks?sessionId=${LONG_SESSION}&limit=100`);
        const fingerprints = new Set(long.breaks.map((b) => b.fingerprint));
        // Every edit of the long session changes the same system block: one cause.
        expect(fingerprints.size).toBe(1);
        const [fingerprint] = [...fingerprints];
        const { page, problems } = await openPage(browser, width, scheme);
        await page.goto(`${server.url}/`);
        await page.locator('nav a', { hasText: 'Causes' }).click();
        await page.waitForURL(/\/causes$/);
        expect(await page.locator('nav a[aria-current="page"]').innerText()).toBe('Causes');
        const row = page.locator(`#causes tr[data-fingerprint="${fingerprint}"]`);
        const breaks = Number((await row.locator('td[data-label="breaks"]').innerText()).replace(/,/g, ''));
        expect(breaks).toBeGreaterThanOrEqual(LONG_BREAKS);
        expect(await row.locator('td[data-label="changed part"]').innerText()).toBe('system blocks 1');
        expect(await page.locator('#causes tbody tr').count()).toBeGreaterThan(1);
        expect(await noSidewaysScroll(page)).toBe(true);
        expect(await brokenNames(page, '#causes')).toEqual([]);
        await shoot(page, `causes-${scheme}-${width}`);

        // The cause's breaks, every one of them and nothing else, over two pages.
        await row.locator('td:first-child a').click();
        await page.waitForURL(new RegExp(`/breaks\\?fingerprint=${fingerprint}$`));
        expect(await page.getByLabel('fingerprint').inputValue()).toBe(fingerprint);
        const first = await rowIds(page);
        expect(first).toHaveLength(20);
        await page.locator('a[rel=next]').click();
        await page.waitForURL(/cursor=/);
        const rest = await rowIds(page);
        const opened = [...first, ...rest];
        expect(opened).toHaveLength(breaks);
        expect(new Set(await page.locator('#breaks .reason').allInnerTexts())).toEqual(new Set(['system_changed']));
        // The UI's default range, the last 24 hours (the workload's old session lies before it).
        const listed = await getJson<{ breaks: { requestId: string }[] }>(server.url, `/v1/breaks?fingerprint=${fingerprint}&from=${Date.now() - 86_400_000}&limit=1000`);
        expect(new Set(opened)).toEqual(new Set(listed.breaks.map((b) => b.requestId)));
        expect(problems).toEqual([]);

        const response = await page.goto(`${server.url}/breaks?fingerprint=system_changed`);
        expect(response?.status()).toBe(400);
        expect(await page.locator('#error-message').innerText()).toContain('fingerprint: expected 16 lowercase hex digits');
        expect(await page.locator('#error-hint').innerText()).toContain('Causes page');
        await page.close();
      });
    }
  }
});
