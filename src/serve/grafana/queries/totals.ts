// Sums over the range per reason, model, provider or agent: the breakdowns
// behind pie and bar charts. By reason, only breaks count.
import { frame } from '../frame.js';
import { choiceParam, filtersParam, rangeParam } from '../params.js';
import { filterDocs, RANGE, type GrafanaQuery } from '../query.js';

const GROUPS = ['reason', 'model', 'provider', 'agentId'] as const;

export const totalsQuery: GrafanaQuery = {
  name: 'totals',
  summary:
    'Sums over the range per group, most breaks first: {<groupBy>, turns, breaks, cacheRate, missedCacheReadTokens, estimatedExtraCostUsd, unpricedBreaks}; estimatedExtraCostUsd sums the breaks with a known price (null when every break of the row is unpriced), unpricedBreaks counts the others',
  params: {
    ...RANGE,
    groupBy: { doc: 'reason (default), model, provider or agentId', choices: GROUPS },
    ...filterDocs('model', 'provider', 'agentId', 'reason'),
  },
  async run({ store, project, now }, params) {
    const range = rangeParam(params, now);
    const groupBy = choiceParam(params, 'groupBy', GROUPS, 'reason');
    const filters = filtersParam(params, ['model', 'provider', 'agentId', 'reason']);
    const rows = (await store.totals(project, { ...range, filters, groupBy }))
      .filter((row) => groupBy !== 'reason' || row.group !== '')
      .sort((a, b) => b.breaks - a.breaks || b.turns - a.turns || (a.group ?? '').localeCompare(b.group ?? ''))
      .map((row) => [row.group ?? '', row.turns, row.breaks, row.cacheRate, row.missedCacheReadTokens, row.estimatedExtraCostUsd, row.unpricedBreaks]);
    return frame(
      'table',
      [
        [groupBy, 'string'],
        ['turns', 'number'],
        ['breaks', 'number'],
        ['cacheRate', 'number'],
        ['missedCacheReadTokens', 'number'],
        ['estimatedExtraCostUsd', 'number'],
        ['unpricedBreaks', 'number'],
      ],
      rows,
    );
  },
};
