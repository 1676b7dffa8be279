// Breaks per bucket, by reason (or model, provider, agent), with the tokens
// and money they cost. Only buckets with breaks have rows: bars, not lines.
import { frame, type Cell } from '../frame.js';
import { choiceParam, filtersParam, intervalParam, rangeParam } from '../params.js';
import { filterDocs, INTERVAL, RANGE, type GrafanaQuery } from '../query.js';

const GROUPS = ['reason', 'model', 'provider', 'agentId'] as const;

export const breaksOverTimeQuery: GrafanaQuery = {
  name: 'breaks-over-time',
  summary:
    'Breaks per bucket: {ts, <groupBy>, breaks, missedCacheReadTokens, estimatedExtraCostUsd, unpricedBreaks}; estimatedExtraCostUsd sums the breaks with a known price (null when every one is unpriced), unpricedBreaks counts the others',
  params: {
    ...RANGE,
    ...INTERVAL,
    groupBy: { doc: 'reason (default), model, provider or agentId', choices: GROUPS },
    ...filterDocs('model', 'provider', 'agentId', 'reason'),
  },
  async run({ store, project, now }, params) {
    const range = rangeParam(params, now);
    const intervalMs = intervalParam(params, range);
    const groupBy = choiceParam(params, 'groupBy', GROUPS, 'reason');
    const filters = filtersParam(params, ['model', 'provider', 'agentId', 'reason']);
    const rows: Cell[][] = (await store.stats(project, { ...range, intervalMs, filters, groupBy }))
      .filter((row) => row.breaks > 0)
      .map((row) => [row.ts, row.group ?? '', row.breaks, row.missedCacheReadTokens, row.estimatedExtraCostUsd, row.unpricedBreaks]);
    return frame(
      'series',
      [
        ['ts', 'time'],
        [groupBy, 'string'],
        ['breaks', 'number'],
        ['missedCacheReadTokens', 'number'],
        ['estimatedExtraCostUsd', 'number'],
        ['unpricedBreaks', 'number'],
      ],
      rows,
    );
  },
};
