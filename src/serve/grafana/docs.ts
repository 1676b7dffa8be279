// The Grafana routes for the API reference (docs/api.md, GET /v1), from the
// queries' own declarations.
import type { RouteDoc } from '../rest/docs.js';
import { QUERIES } from './queries/index.js';

export const GRAFANA_ROUTE_DOCS: RouteDoc[] = [
  ...QUERIES.map(
    (query): RouteDoc => ({
      method: 'GET',
      path: `/grafana/${query.name}`,
      summary: `Infinity datasource (a flat JSON array; times in epoch ms). ${query.summary}`,
      params: Object.fromEntries(Object.entries(query.params).map(([name, param]) => [name, param.doc])),
    }),
  ),
  { method: 'GET', path: '/grafana/json', summary: 'simPod JSON datasource: connection test (the datasource URL is http://<host>:4318/grafana/json)' },
  { method: 'POST', path: '/grafana/json/metrics', summary: 'simPod: every /grafana/<query> above as a metric, its parameters as payload fields' },
  { method: 'POST', path: '/grafana/json/metric-payload-options', summary: 'simPod: the values a payload field takes (dimensions from the data in range)' },
  {
    method: 'POST',
    path: '/grafana/json/query',
    summary: 'simPod: runs each target (target = query name, payload = its parameters; range, intervalMs and ad hoc filters from the request, on the tag-keys only): time series or tables',
  },
  { method: 'POST', path: '/grafana/json/variable', summary: 'simPod: values of a dimension as [{__text, __value}]; the body {"target": "model"} (or simPod\'s {"payload": {"target": "model"}, "range": …}); the last 24 hours unless range says otherwise' },
  { method: 'POST', path: '/grafana/json/tag-keys', summary: 'simPod: the ad hoc filter keys (model, provider, agentId, reason, sessionId)' },
  { method: 'POST', path: '/grafana/json/tag-values', summary: 'simPod: the values of one ad hoc filter key' },
];
