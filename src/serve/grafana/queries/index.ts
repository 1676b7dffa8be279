// Every Grafana query, in the order the docs list them.
import type { GrafanaQuery } from '../query.js';
import { agreementQuery, verdictsQuery } from './agreement.js';
import { annotationsQuery } from './annotations.js';
import { breakCausesQuery } from './break-causes.js';
import { breaksOverTimeQuery } from './breaks-over-time.js';
import { breaksQuery } from './breaks.js';
import { cacheRateQuery } from './cache-rate.js';
import { changedToolsQuery } from './changed-tools.js';
import { sessionsQuery } from './sessions.js';
import { summaryQuery } from './summary.js';
import { tokensQuery } from './tokens.js';
import { totalsQuery } from './totals.js';
import { turnsQuery } from './turns.js';
import { valuesQuery } from './values.js';
import { INSIGHT_QUERIES } from './insights.js';

export const QUERIES: readonly GrafanaQuery[] = [
  summaryQuery,
  cacheRateQuery,
  tokensQuery,
  breaksOverTimeQuery,
  totalsQuery,
  breakCausesQuery,
  breaksQuery,
  changedToolsQuery,
  agreementQuery,
  verdictsQuery,
  sessionsQuery,
  turnsQuery,
  annotationsQuery,
  valuesQuery,
  ...INSIGHT_QUERIES,
];

export const QUERY_BY_NAME = new Map(QUERIES.map((q) => [q.name, q]));
