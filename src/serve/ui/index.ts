// The web UI at /: server-rendered views of the stored data (overview,
// sessions, a session, the breaks, a break, their causes), charts drawn in the browser by uPlot. The
// same keys and projects as every other read route.
import type { Hono } from 'hono';
import type { AppEnv, ReadDeps } from '../../app.js';
import { registerAssets } from './assets.js';
import { registerBreakPage } from './break.js';
import { registerBreakList } from './breaks.js';
import { registerCausesPage } from './causes.js';
import { registerInsightsPage } from './insights.js';
import { registerOverview } from './overview.js';
import { registerSessionPage } from './session.js';
import { registerSessionList } from './sessions.js';

export function registerUi(app: Hono<AppEnv>, deps: ReadDeps): void {
  registerAssets(app);
  registerOverview(app, deps);
  registerSessionList(app, deps);
  registerSessionPage(app, deps);
  registerBreakList(app, deps);
  registerBreakPage(app, deps);
  registerCausesPage(app, deps);
  registerInsightsPage(app, deps);
}
