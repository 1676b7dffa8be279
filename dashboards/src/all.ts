// Every dashboard and the file it is written to (dashboards/<file>).
import type { Dashboard } from '@grafana/grafana-foundation-sdk/dashboard';
import { breaks } from './breaks.js';
import { insights } from './insights.js';
import { overview } from './overview.js';
import { prometheus } from './prometheus.js';
import { session } from './session.js';

export const DASHBOARDS: Record<string, () => Dashboard> = {
  'cachebreak-overview.json': overview,
  'cachebreak-breaks.json': breaks,
  'cachebreak-session.json': session,
  'cachebreak-prometheus.json': prometheus,
  'cachebreak-insights.json': insights,
};

/** A dashboard as written to its file. */
export function render(build: () => Dashboard): string {
  return JSON.stringify(build(), null, 2) + '\n';
}
