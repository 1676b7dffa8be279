// The built-in page at /: in-process for its content and escaping, and in
// headless Chromium (Debian's `chromium`, which .ci/run installs) against a
// real server, with a screenshot of what a person sees.
import { serve } from '@hono/node-server';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BREAK_REASONS } from '../../src/core/types.js';
import { tempDir } from '../helpers.js';
import { mixedWorkload, WAITING_USAGE } from '../e2e/mixed-workload.js';
import { NOW, testApp } from '../serve/harness.js';
import { demoApp } from './demo.js';

/**
 * Runs headless Chromium (required, never skipped), asynchronously: the
 * server it loads from runs in this process.
 */
async function chromium(args: string[]): Promise<string> {
  const child = spawn('chromium', ['--headless=new', '--no-sandbox', '--disable-gpu', '--hide-scrollbars', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  try {
    const [code] = (await Promise.race([
      once(child, 'exit'),
      once(child, 'error').then(([error]) => {
        throw (error as NodeJS.ErrnoException).code === 'ENOENT'
          ? new Error('chromium is not installed: `apt-get install chromium` (Debian/Ubuntu; .ci/run does this in CI)')
          : error;
      }),
    ])) as [number | null];
    if (code !== 0) throw new Error(`chromium exited with ${code}: ${stderr.slice(-1000)}`);
    return stdout;
  } finally {
    clearTimeout(timer);
  }
}

/** Width and height from a PNG's IHDR chunk. */
function pngSize(png: Buffer): { width: number; height: number } {
  expect(png.subarray(0, 8).toString('hex')).toBe('89504e470d0a1a0a');
  return { width: png.readUInt32BE(16), height: png.readUInt32BE(20) };
}

describe('GET /', () => {
  it('shows the last 24 hours: the numbers, every break reason, and the latest breaks with their changed tools', async () => {
    const { app } = await demoApp();
    const response = await app.request('/');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    const page = await response.text();
    expect(page).toContain('cache rate (writes counted)');
    expect(page).toMatch(/<span class="value">9\d\.\d %<\/span><span class="label">cache rate/);
    for (const reason of BREAK_REASONS) expect(page, reason).toContain(`<td class="reason">${reason}</td>`);
    expect(page).toMatch(/<code>mcp__github__[a-z_]+(, mcp__[a-z_]+)*<\/code>/);
    expect(page.match(/<tr><td>2026-11-\d\d \d\d:\d\d:\d\d UTC<\/td>/g)).toHaveLength(50);
  });

  it('says what to do when there is no data, and escapes what it shows', async () => {
    const { app, post } = testApp();
    expect(await (await app.request('/')).text()).toContain('No turns in the last 24 hours');
    const now = Date.parse('2026-11-30T11:00:00Z');
    const turn = (requestId: string, ts: number, read: number, write: number, model: string) => ({
      type: 'turn',
      requestId,
      sessionId: '<script>alert(1)</script>',
      ts,
      provider: 'anthropic',
      model,
      systemHash: 's',
      tools: [{ name: 'x', schemaHash: 'h' }],
      uncachedInputTokens: 10,
      cacheReadInputTokens: read,
      cacheWriteInputTokens: write,
      outputTokens: 5,
    });
    await post({ events: [turn('r1', now, 0, 40_000, 'claude-sonnet-4-5'), turn('r2', now + 1000, 0, 40_000, '<b>model</b>')] });
    const page = await (await app.request('/')).text();
    expect(page).not.toContain('<script>alert');
    expect(page).toContain('&#60;script&#62;alert(1)&#60;/script&#62;');
    expect(page).toContain('&#60;b&#62;model&#60;/b&#62;');
    expect(page).toContain('<td class="reason">model_changed</td>');
  });

  it('shows what breaks cost as the sum over priced breaks and the count of unpriced ones, never $0 for an unknown price', async () => {
    const { app, post } = testApp();
    const events = mixedWorkload(NOW - 3_600_000);
    expect(await (await post({ events: [...events, WAITING_USAGE] })).json()).toMatchObject({ accepted: events.length + 1 });
    // Only unpriced breaks: no basis for a figure.
    const unpriced = testApp();
    await unpriced.post({ events: events.filter((e) => e.sessionId === 'sess_unpriced') });

    const server = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 });
    const other = serve({ fetch: unpriced.app.fetch, hostname: '127.0.0.1', port: 0 });
    await Promise.all([once(server, 'listening'), once(other, 'listening')]);
    try {
      const pageOf = async (s: typeof server) => (await fetch(`http://127.0.0.1:${(s.address() as AddressInfo).port}/`)).text();
      const page = await pageOf(server);
      expect(page).toContain('<span class="value">$0.1687 <small>+ 2 unpriced</small></span><span class="label">estimated extra cost</span>');
      expect(page).toContain('<tr><td class="reason">system_changed</td><td class="n">2</td><td class="n">60,000</td><td class="n">unknown (2 unpriced)</td></tr>');
      expect(page).toContain('<tr><td class="reason">tools_order_changed</td><td class="n">1</td><td class="n">48,900</td><td class="n">$0.1687</td></tr>');
      // Each unpriced break in the latest breaks.
      expect(page.match(/<td class="n">unknown price<\/td><\/tr>/g)).toHaveLength(2);
      expect(page).not.toMatch(/\$0\.0+\b/);
      expect(page).toContain('<p class="muted waiting">1 usage record waits for its snapshot or session: in no figure here until it joins.</p>');

      const none = await pageOf(other);
      expect(none).toContain('<span class="value">unknown <small>(2 unpriced)</small></span><span class="label">estimated extra cost</span>');
      expect(none).not.toMatch(/\$0\.0+\b/);
      expect(none).not.toContain('usage record');
    } finally {
      server.close();
      other.close();
    }
  });

  it('renders in headless Chromium with the reasons and changed tools on screen', { timeout: 120_000 }, async () => {
    const { app } = await demoApp();
    const server = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 });
    await once(server, 'listening');
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
      const dom = await chromium(['--dump-dom', url]);
      expect(dom).toContain('<h1>cachebreak</h1>');
      for (const reason of BREAK_REASONS) expect(dom, reason).toContain(reason);
      const screenshot = join(tempDir(), 'page.png');
      await chromium([`--screenshot=${screenshot}`, '--window-size=1280,1400', url]);
      const png = readFileSync(screenshot);
      expect(pngSize(png)).toEqual({ width: 1280, height: 1400 });
      // A blank page compresses to a few kilobytes; numbers, tables and text do not.
      expect(png.length).toBeGreaterThan(40_000);
    } finally {
      server.close();
    }
  });
});
