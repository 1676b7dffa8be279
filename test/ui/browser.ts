// Debian's Chromium for the UI tests (.ci/run installs it): one browser per
// file, pages that collect every console error, page error and dialog (an
// escaped id never opens one), the checks every view shares, and where
// screenshots go (test-results/ui/, kept as CI artifacts).
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { expect } from 'vitest';
import { postEvents, startServer, type ServerProcess } from '../e2e/server.js';

export const SHOTS = join(process.cwd(), 'test-results', 'ui');

export type Scheme = 'light' | 'dark';

export function launchBrowser(): Promise<Browser> {
  mkdirSync(SHOTS, { recursive: true });
  return chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-background-networking'] });
}

/** A browser, and a server (a SQLite file, on loopback) that stored every one of `events`. */
export async function browserAndServer(events: unknown[]): Promise<{ browser: Browser; server: ServerProcess }> {
  const [browser, server] = await Promise.all([launchBrowser(), startServer({ lifetime: 'file' })]);
  const reply = await postEvents(server.url, { events });
  expect(reply.body).toMatchObject({ accepted: events.length, rejected: [] });
  return { browser, server };
}

/** A page `width` px wide in a colour scheme, and the problems it meets: a test expects none. */
export async function openPage(browser: Browser, width = 1280, colorScheme: Scheme = 'light'): Promise<{ page: Page; problems: string[] }> {
  const page = await browser.newPage({ viewport: { width, height: 900 }, colorScheme });
  const problems: string[] = [];
  page.on('console', (m) => m.type() === 'error' && problems.push(`console: ${m.text()}`));
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('dialog', (d) => {
    problems.push(`dialog: ${d.message()}`);
    void d.dismiss();
  });
  return { page, problems };
}

/** A screenshot of the whole page, named for what it shows. */
export const shoot = (page: Page, name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });

/** The mean of a CSS rgb() colour's channels, 0 (black) to 255 (white). */
export const lightness = (rgb: string) => (rgb.match(/\d+/g) ?? []).slice(0, 3).map(Number).reduce((a, b) => a + b, 0) / 3;

/** Neither the page nor any table in it scrolls sideways. */
export const noSidewaysScroll = (page: Page) =>
  page.evaluate<boolean>("[document.documentElement, ...document.querySelectorAll('.scroll')].every((e) => e.scrollWidth <= e.clientWidth)");

/**
 * Words split across lines in the tables of `within`: a name (class nm,
 * which never wraps) on more than one line box, or any part of a word in a
 * cell that is (a word may wrap after a hyphen, underscore, slash or comma,
 * never inside the letters and digits between them).
 */
export const brokenNames = (page: Page, within: string) =>
  page.evaluate<string[]>(`(() => {
    const lines = (range) => new Set([...range.getClientRects()].filter((r) => r.width > 0).map((r) => Math.round(r.top))).size;
    const broken = [];
    for (const name of document.querySelectorAll(${JSON.stringify(`${within} .nm`)})) {
      const range = document.createRange();
      range.selectNodeContents(name);
      if (lines(range) > 1) broken.push(name.textContent);
    }
    const walker = document.createTreeWalker(document.querySelector(${JSON.stringify(within)}), NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      if (!node.parentElement.closest('td')) continue;
      for (const word of node.textContent.matchAll(/[^\\s_\\/,-]+[_\\/,-]?/g)) {
        const range = document.createRange();
        range.setStart(node, word.index);
        range.setEnd(node, word.index + word[0].length);
        if (lines(range) > 1) broken.push(word[0]);
      }
    }
    return broken;
  })()`);
