// docs/ui.png is the overview of `cachebreak demo`'s day: this takes the same
// shot into test-results/ui/ (and into docs/ with UPDATE_UI_SHOT=1, which is
// `npm run ui-shot`), and checks the page showed the demo's breaks.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SHOTS } from './browser.js';
import { demoShot } from './demo-shot.js';

/** Width and height from a PNG's IHDR chunk. */
function pngSize(path: string): { width: number; height: number } {
  const png = readFileSync(path);
  expect(png.subarray(1, 4).toString('latin1')).toBe('PNG');
  return { width: png.readUInt32BE(16), height: png.readUInt32BE(20) };
}

describe('the README picture', () => {
  it('is the overview of cachebreak demo, at 1280 px, with the demo\'s break reasons', { timeout: 120_000 }, async () => {
    const path = process.env.UPDATE_UI_SHOT === '1' ? join(process.cwd(), 'docs', 'ui.png') : join(SHOTS, 'demo-overview.png');
    const { reasons } = await demoShot(path);
    // The demo has every kind of break: the cost table lists several reasons.
    expect(reasons).toEqual(expect.arrayContaining(['tools_order_changed', 'system_changed', 'model_changed']));
    expect(pngSize(path).width).toBe(1280);
    expect(pngSize(join(process.cwd(), 'docs', 'ui.png')).width).toBe(1280);
  });
});
