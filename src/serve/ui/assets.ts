// The web UI's static files: uPlot from its package and the UI's own script.
// Their content changes only with a new version, so browsers may keep them a day.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Hono } from 'hono';
import type { AppEnv } from '../../app.js';
import { CLIENT_SCRIPT } from './client.js';

const require = createRequire(import.meta.url);
const uplot = (file: string) => readFileSync(require.resolve(`uplot/dist/${file}`), 'utf8');

const JS = 'text/javascript; charset=utf-8';
const ASSETS = new Map<string, { type: string; body: () => string }>([
  ['uplot.js', { type: JS, body: () => uplot('uPlot.iife.min.js') }],
  ['uplot.css', { type: 'text/css; charset=utf-8', body: () => uplot('uPlot.min.css') }],
  ['ui.js', { type: JS, body: () => CLIENT_SCRIPT }],
]);

export function registerAssets(app: Hono<AppEnv>): void {
  const loaded = new Map<string, string>();
  app.get('/ui/:asset', (c) => {
    const name = c.req.param('asset');
    const asset = ASSETS.get(name);
    if (!asset) return c.notFound();
    let body = loaded.get(name);
    if (body === undefined) loaded.set(name, (body = asset.body()));
    return c.body(body, 200, { 'content-type': asset.type, 'cache-control': 'private, max-age=86400' });
  });
}
