// The app in-process on a database filled by the demo workload: a day of
// sessions with every break reason, ending at the harness's pinned clock.
import { demoWorkload } from '../../src/cli/demo/workload.js';
import { NOW, storeApp } from '../serve/harness.js';

export const DAY = 86_400_000;
export const DEMO_RANGE = { from: NOW - DAY, to: NOW };

export async function demoApp() {
  const app = await storeApp();
  const events = demoWorkload({ seed: 1, now: NOW });
  for (let start = 0; start < events.length; start += 5000) {
    await app.store.write([{ project: 'default', events: events.slice(start, start + 5000) }]);
  }
  return app;
}
