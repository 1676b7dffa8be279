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

/** Neither the page nor any table in it scrolls sideways. */
export const noSidewaysScroll = (page: Page) =>
  page.evaluate<boolean>("[document.documentElement, ...document.querySelectorAll('.scroll')].every((e) => e.scrollWidth <= e.clientWidth)");

/** Names split across lines: a name (class nm) whose text lies on more than one line box. */
export const brokenNames = (page: Page, within: string) =>
  page.locator(`${within} .nm`).evaluateAll((names) => names.filter((n) => n.getClientRects().length > 1).map((n) => n.textContent));
