// The web UI's routes for the API reference (docs/api.md, GET /v1).
import type { RouteDoc } from '../rest/docs.js';

const RANGE = {
  range: '1h | 24h (default) | 7d | 30d | all',
  from: 'start of a custom range: RFC 3339 or epoch ms (instead of range)',
  to: 'end of a custom range (default now)',
};

export const UI_ROUTE_DOCS: RouteDoc[] = [
  { method: 'GET', path: '/', summary: 'Web UI overview: cache rate and breaks by reason over time, what breaks cost by reason, most first, each reason linking to its breaks (priced sum, unpriced counted apart), the latest breaks', params: RANGE },
  { method: 'GET', path: '/sessions', summary: 'Web UI: sessions in the range, searchable by session id or agent, sortable', params: { ...RANGE, q: 'search text', order: 'recent (default) | worst_cache_rate | extra_cost' } },
  { method: 'GET', path: '/sessions/:sessionId', summary: "Web UI: a session's turns per stream, tokens per turn, breaks marked and linked" },
  {
    method: 'GET',
    path: '/breaks',
    summary:
      'Web UI: every break in the range, 20 a page (next and previous), newest or most extra cost first, each linking to its break page; an unknown filter, value or order answers a 400 page',
    params: {
      ...RANGE,
      reason: 'only these reasons (comma-separate for several)',
      cause: 'only these causes: ttl_expired, possible_ttl_expiry, likely_server_eviction, or none',
      model: 'only these models',
      agentId: 'only these agents',
      toolName: 'only breaks whose changed tools name one of these',
      sessionId: 'only these sessions',
      provider: 'only these providers',
      fingerprint: 'only breaks of these causes (from the Causes page or GET /v1/breaks/fingerprints), read from the first 50,000 breaks of the range',
      order: 'recent (default) | extra_cost (unpriced last)',
      cursor: 'the next page (from the page\'s next link)',
      back: 'the cursors of the pages before, for previous',
    },
  },
  { method: 'GET', path: '/breaks/:requestId', summary: "Web UI: a break as a diff of the baseline's and the turn's prefixes, the idle gap against the TTL, and the harness's and provider's verdicts" },
  { method: 'GET', path: '/causes', summary: 'Web UI: the breaks of the range grouped by the fingerprint of their cause, most costly first: breaks, sessions, first and last seen, the agent version that first showed it, extra cost; each cause leading to its breaks', params: RANGE },
  { method: 'GET', path: '/insights', summary: 'Web UI: what to change and what it would have saved (docs/insights.md): avoidable breaks, volatile prompt parts, fan-out cold starts, TTL advice, chronic misses, and the verdicts that differ from cachebreak\'s, each break one click away', params: RANGE },
  { method: 'GET', path: '/ui/:asset', summary: 'Web UI static files (uplot.js, uplot.css, ui.js), cacheable for a day' },
];
