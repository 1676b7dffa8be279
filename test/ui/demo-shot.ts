// The overview of `cachebreak demo`'s day, as a browser shows it: what
// docs/ui.png is (`npm run ui-shot` takes it again), so the picture in the
// README is the product's own data, never a test's fixtures.
import { join } from 'node:path';
import { cli } from '../cli/run.js';
import { tempDir } from '../helpers.js';
import { startServer } from '../e2e/server.js';
import { launchBrowser } from './browser.js';

/** Writes `cachebreak demo` into a fresh SQLite file, serves it, and screenshots the overview at 1280 px to `path`. What the page showed is returned. */
export async function demoShot(path: string): Promise<{ reasons: string[] }> {
  const db = join(tempDir(), 'demo.db');
  // The day before now, as `cachebreak demo` writes it for a user.
  const demo = await cli(['demo', '--db', db], { now: Date.now() });
  if (demo.code !== 0) throw new Error(`cachebreak demo exited ${demo.code}: ${demo.stderr}`);
  const [browser, server] = await Promise.all([
    launchBrowser(),
    startServer({ db, lifetime: 'file' }),
  ]);
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(`${server.url}/`);
    await page.locator('#cache-rate canvas').waitFor();
    await page.locator('#breaks-by-reason canvas').waitFor();
    const reasons = await page.locator('#reasons td.reason').allInnerTexts();
    await page.screenshot({ path, fullPage: true });
    return { reasons };
  } finally {
    await Promise.all([browser.close(), server.stop()]);
  }
}
