// The charts in headless Chromium (Debian's) against a real `cachebreak
// serve`: axes and grid in the page's colours in light and dark, whole
// numbers only on an axis of counts, and an expected miss (a compaction)
// marked apart from the breaks, on a session's chart and the overview's: a
// dashed line in the muted colour beside the red one. The break page folds long runs of unchanged tools.
// Screenshots go to test-results/ui/.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashString } from '../../src/core/hash.js';
import { tools, toWire, turn, usage } from '../core/scenario.js';
import type { ServerProcess } from '../e2e/server.js';
import { browserAndServer, openPage, shoot } from './browser.js';

const SESSION = 'sess_compacted';
/** Ten tools; the last turn changes the sixth's schema. */
const TOOL_NAMES = ['read_file', 'write_file', 'edit', 'glob', 'grep', 'web_fetch', 'shell', 'todo', 'task', 'notebook'];

/** Five turns: a write, a hit, a compaction the harness announced (expected), a hit, then a system change (a break). */
function compactedSession(now: number): unknown[] {
  const t0 = now - 3_600_000;
  const system = (v: string) => [hashString('billing'), hashString(v)];
  const steps = [
    { read: 0, write: 40_000 },
    { read: 40_000, write: 500 },
    { read: 0, write: 12_000, expectMiss: 'compaction' },
    { read: 12_000, write: 400 },
    { read: 0, write: 12_600, system: 'edited' },
  ];
  return steps.map((step, i) =>
    toWire(
      turn(`c${i + 1}`, {
        sessionId: SESSION,
        ts: t0 + i * 60_000,
        endTs: t0 + i * 60_000 + 4_000,
        systemBlockHashes: system(step.system ?? 'You are a coding agent.'),
        tools: tools(TOOL_NAMES, step.system ? { web_fetch: 2 } : {}),
        usage: usage(step.read, step.write),
        ...(step.expectMiss ? { expectMiss: step.expectMiss } : {}),
      }),
    ),
  );
}

let browser: Browser;
let server: ServerProcess;

beforeAll(async () => {
  ({ browser, server } = await browserAndServer(compactedSession(Date.now())));
}, 60_000);
afterAll(() => browser?.close());

interface Drawn {
  /** What the chart's axes and grid are stroked with. */
  axis: string;
  grid: string;
  /** The page's colour variables. */
  fg: string;
  line: string;
  /** Every tick value of the y axis. */
  yTicks: number[];
  /** Colours ([r,g,b] strings) of the opaque pixels down the column of an x value, inside the plot. */
  column: (x: number) => string[];
}

/** Reads the chart in element `id` as drawn: its uPlot instance (on the element) and its canvas. Browser code, as text: the tests compile without the DOM's types. */
async function drawn(page: Page, id: string, xs: number[]): Promise<Omit<Drawn, 'column'> & { columns: string[][] }> {
  await page.locator(`#${id} canvas`).waitFor();
  return page.evaluate(`(() => {
    const u = document.getElementById(${JSON.stringify(id)}).uplot;
    const css = getComputedStyle(document.documentElement);
    const columns = ${JSON.stringify(xs)}.map((x) => {
      const px = Math.round(u.valToPos(x, 'x', true));
      const data = u.ctx.getImageData(px, u.bbox.top, 1, u.bbox.height).data;
      const seen = [];
      for (let i = 0; i < data.length; i += 4) if (data[i + 3] > 200) seen.push(data[i] + ',' + data[i + 1] + ',' + data[i + 2]);
      return seen;
    });
    return {
      axis: u.axes[1].stroke(u, 1),
      grid: u.axes[1].grid.stroke(u, 1),
      fg: css.getPropertyValue('--fg').trim(),
      line: css.getPropertyValue('--line').trim(),
      yTicks: u.axes[1]._splits,
      columns,
    };
  })()`);
}

const rgb = (hex: string) => [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16)).join(',');

describe('charts', () => {
  for (const colorScheme of ['light', 'dark'] as const) {
    it(`draw axes in the page's colours, counts in whole numbers, and an expected miss apart from a break (${colorScheme})`, async () => {
      const { page, problems } = await openPage(browser, 1280, colorScheme);
      await page.goto(`${server.url}/sessions/${SESSION}`);
      // Turn 3 is the compaction, turn 5 the break.
      const chart = await drawn(page, 'stream-0', [3, 5]);
      expect(chart.axis).toBe(chart.fg);
      expect(chart.grid).toBe(chart.line);
      expect(chart.yTicks.length).toBeGreaterThan(1);
      const colours = await page.evaluate<{ bad: string; muted: string }>(
        "(() => { const css = getComputedStyle(document.documentElement); return { bad: css.getPropertyValue('--bad').trim(), muted: css.getPropertyValue('--muted').trim() }; })()",
      );
      const [compaction, broken] = chart.columns;
      // The break: a solid red line down the whole plot.
      expect(broken!.filter((c) => c === rgb(colours.bad)).length).toBeGreaterThan(0);
      // The compaction: dashes in the muted colour, never red.
      expect(compaction!.filter((c) => c === rgb(colours.muted)).length).toBeGreaterThan(0);
      expect(compaction).not.toContain(rgb(colours.bad));
      expect(await page.locator('main').innerText()).toContain('dashed lines mark expected misses');
      await shoot(page, `session-chart-${colorScheme}`);

      // The overview's breaks by reason: one break, so the count axis must not tick at 0.5; the compaction's bucket dashed.
      await page.goto(`${server.url}/`);
      const marked = await page.evaluate<number[]>(
        "JSON.parse(document.getElementById('charts').textContent).find((c) => c.id === 'breaks-by-reason').expected",
      );
      expect(marked).toHaveLength(1);
      const overview = await drawn(page, 'breaks-by-reason', marked);
      expect(overview.columns[0]!.filter((c) => c === rgb(colours.muted)).length).toBeGreaterThan(0);
      expect(await page.locator('#expected').innerText()).toContain('1 expected miss (a compaction');
      expect(overview.yTicks.length).toBeGreaterThan(1);
      expect(overview.yTicks.every((v) => Number.isInteger(v))).toBe(true);
      expect(overview.axis).toBe(overview.fg);
      expect(problems).toEqual([]);
      await page.close();
    });
  }

  it('the break page folds runs of unchanged tools, each side, and opens them on a click', async () => {
    const { page } = await openPage(browser, 700);
    await page.goto(`${server.url}/breaks/c5`);
    for (const side of [0, 1]) {
      const list = page.locator('#tools .side').nth(side);
      // 5 unchanged, web_fetch, 4 unchanged.
      expect(await list.locator('li.fold summary').allInnerTexts()).toEqual(['5 unchanged', '4 unchanged']);
      expect(await list.locator('li.changed').evaluateAll((items) => items.map((li) => [li.getAttribute('data-tool'), li.getAttribute('value')]))).toEqual([['web_fetch', '6']]);
      expect(await list.locator('li[data-tool="read_file"]').isVisible()).toBe(false);
    }
    await page.locator('#tools .side').nth(1).locator('li.fold summary').first().click();
    expect(await page.locator('#tools .side').nth(1).locator('li[data-tool="read_file"]').isVisible()).toBe(true);
    expect(await page.locator('#tools .side').nth(0).locator('li[data-tool="read_file"]').isVisible()).toBe(false);
    await shoot(page, 'break-folded-700');
    await page.close();
  });
});
