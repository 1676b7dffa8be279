// The simPod JSON datasource protocol under /grafana/json, serving the same
// queries as the Infinity endpoints. Its datasource URL is
// http://<host>:4318/grafana/json.
import type { Hono } from 'hono';
import type { AppEnv, ReadDeps } from '../../../app.js';
import { registerMetrics } from './metrics.js';
import { registerQuery } from './query.js';
import { registerVariables } from './variables.js';

export function registerSimpod(app: Hono<AppEnv>, deps: ReadDeps): void {
  // "Test connection": any 200.
  app.get('/grafana/json', (c) => c.json({ status: 'ok' }));
  app.get('/grafana/json/', (c) => c.json({ status: 'ok' }));
  registerMetrics(app, deps);
  registerQuery(app, deps);
  registerVariables(app, deps);
}
