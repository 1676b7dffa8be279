// Breaks by reason and cause: whether a break with nothing changed was a TTL
// that ran out or an eviction, and the same for the other reasons.
import { frame } from '../frame.js';
import { filtersParam, rangeParam } from '../params.js';
import { filterDocs, RANGE, type GrafanaQuery } from '../query.js';

export const breakCausesQuery: GrafanaQuery = {
  name: 'break-causes',
  summary:
    'Breaks by reason and cause (ttl_expired, likely_server_eviction, or none), most first: {reason, cause, breaks, missedCacheReadTokens, estimatedExtraCostUsd, unpricedBreaks}; estimatedExtraCostUsd sums the breaks with a known price (null when every one is unpriced), unpricedBreaks counts the others',
  params: { ...RANGE, ...filterDocs('model', 'provider', 'agentId', 'reason', 'sessionId') },
  async run({ store, project, now }, params) {
    const range = rangeParam(params, now);
    const filters = filtersParam(params, ['model', 'provider', 'agentId', 'reason', 'sessionId']);
    const rows = (await store.breakCauses(project, range, filters)).map((row) => [
      row.reason,
      row.cause ?? 'none',
      row.breaks,
      row.missedCacheReadTokens,
      row.estimatedExtraCostUsd,
      row.unpricedBreaks,
    ]);
    return frame(
      'table',
      [
        ['reason', 'string'],
        ['cause', 'string'],
        ['breaks', 'number'],
        ['missedCacheReadTokens', 'number'],
        ['estimatedExtraCostUsd', 'number'],
        ['unpricedBreaks', 'number'],
      ],
      rows,
    );
  },
};
