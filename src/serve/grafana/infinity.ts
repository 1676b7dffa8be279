// The Infinity datasource's side: GET /grafana/<query>, answering a flat JSON
// array of objects with epoch-ms times, so a target needs no root selector.
import type { Hono } from 'hono';
import type { AppEnv, ReadDeps } from '../../app.js';
import { toObjects } from './frame.js';
import { QUERIES } from './queries/index.js';

export function registerInfinity(app: Hono<AppEnv>, deps: ReadDeps): void {
  for (const query of QUERIES) {
    app.get(`/grafana/${query.name}`, async (c) => {
      const frame = await query.run({ store: deps.store, project: c.var.project, now: deps.now(), ...(deps.prices ? { prices: deps.prices } : {}) }, (name) => c.req.queries(name));
      return c.json(toObjects(frame));
    });
  }
}
