// The range's headline numbers in one row, for stat panels.
import { frame } from '../frame.js';
import { filtersParam, rangeParam } from '../params.js';
import { filterDocs, RANGE, type GrafanaQuery } from '../query.js';

export const summaryQuery: GrafanaQuery = {
  name: 'summary',
  summary:
    'One row over the whole range: {turns, breaks, cacheRate, uncached, read, write, output, unreportedInputTokens, missedCacheReadTokens, estimatedExtraCostUsd, unpricedBreaks}; cacheRate = read / (uncached + read + write), null when nothing reported cache usage; unreportedInputTokens: input of turns that reported no cache field, outside the rate; estimatedExtraCostUsd sums the breaks with a known price, null when every break is unpriced; unpricedBreaks: breaks of models with no known price',
  params: { ...RANGE, ...filterDocs('model', 'provider', 'agentId') },
  async run({ store, project, now }, params) {
    const range = rangeParam(params, now);
    const filters = filtersParam(params, ['model', 'provider', 'agentId']);
    const [total] = await store.totals(project, { ...range, filters });
    const t = total ?? {
      turns: 0,
      breaks: 0,
      cacheRate: null,
      tokens: { uncached: 0, read: 0, write: 0, output: 0 },
      unreportedInputTokens: 0,
      missedCacheReadTokens: 0,
      estimatedExtraCostUsd: 0,
      unpricedBreaks: 0,
    };
    return frame(
      'table',
      [
        ['turns', 'number'],
        ['breaks', 'number'],
        ['cacheRate', 'number'],
        ['uncached', 'number'],
        ['read', 'number'],
        ['write', 'number'],
        ['output', 'number'],
        ['unreportedInputTokens', 'number'],
        ['missedCacheReadTokens', 'number'],
        ['estimatedExtraCostUsd', 'number'],
        ['unpricedBreaks', 'number'],
      ],
      [
        [
          t.turns,
          t.breaks,
          t.cacheRate,
          t.tokens.uncached,
          t.tokens.read,
          t.tokens.write,
          t.tokens.output,
          t.unreportedInputTokens,
          t.missedCacheReadTokens,
          t.estimatedExtraCostUsd,
          t.unpricedBreaks,
        ],
      ],
    );
  },
};
