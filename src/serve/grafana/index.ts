// Grafana-ready queries: the Infinity endpoints (GET /grafana/<query>) and
// the simPod JSON protocol (/grafana/json/…), one implementation per query.
import type { Hono } from 'hono';
import type { AppEnv, ReadDeps } from '../../app.js';
import { registerInfinity } from './infinity.js';
import { registerSimpod } from './simpod/index.js';

export function registerGrafana(app: Hono<AppEnv>, deps: ReadDeps): void {
  registerSimpod(app, deps);
  registerInfinity(app, deps);
}
