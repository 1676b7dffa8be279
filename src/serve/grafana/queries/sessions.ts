// Sessions ranked: the worst cache rate or the most extra cost first, from
// the per-stream running sums (no turn is read).
import type { SessionOrder } from '../../../store/store.js';
import { frame } from '../frame.js';
import { choiceParam, filtersParam, limitParam, rangeParam } from '../params.js';
import { filterDocs, limitDoc, RANGE, type GrafanaQuery } from '../query.js';

const ORDERS: readonly SessionOrder[] = ['worst_cache_rate', 'extra_cost', 'recent'];

export const sessionsQuery: GrafanaQuery = {
  name: 'sessions',
  summary:
    'Sessions seen in the range: {sessionId, agentIds ("main, task-1"), firstSeen, lastSeen, turns, breaks, cacheRate, missedCacheReadTokens, estimatedExtraCostUsd, unpricedBreaks, uncached, read, write, output, unreportedInputTokens}; cacheRate = read / (uncached + read + write); unreportedInputTokens: input of turns that reported no cache field, outside the rate; estimatedExtraCostUsd sums the breaks with a known price (null when every one is unpriced), unpricedBreaks counts the others',
  params: {
    ...RANGE,
    order: { doc: 'worst_cache_rate (default), extra_cost or recent', choices: ORDERS },
    limit: limitDoc(20, 1000),
    ...filterDocs('agentId', 'sessionId'),
  },
  async run({ store, project, now }, params) {
    const range = rangeParam(params, now);
    const order = choiceParam(params, 'order', ORDERS, 'worst_cache_rate');
    const limit = limitParam(params, 20, 1000);
    const filters = filtersParam(params, ['agentId', 'sessionId']);
    const page = await store.sessions(project, range, filters, { limit }, order);
    const rows = page.items.map((s) => [
      s.sessionId,
      s.agentIds.join(', '),
      s.firstSeen,
      s.lastSeen,
      s.turns,
      s.breaks,
      s.cacheRate,
      s.missedCacheReadTokens,
      s.estimatedExtraCostUsd,
      s.unpricedBreaks,
      s.tokens.uncached,
      s.tokens.read,
      s.tokens.write,
      s.tokens.output,
      s.unreportedInputTokens,
    ]);
    return frame(
      'table',
      [
        ['sessionId', 'string'],
        ['agentIds', 'string'],
        ['firstSeen', 'time'],
        ['lastSeen', 'time'],
        ['turns', 'number'],
        ['breaks', 'number'],
        ['cacheRate', 'number'],
        ['missedCacheReadTokens', 'number'],
        ['estimatedExtraCostUsd', 'number'],
        ['unpricedBreaks', 'number'],
        ['uncached', 'number'],
        ['read', 'number'],
        ['write', 'number'],
        ['output', 'number'],
        ['unreportedInputTokens', 'number'],
      ],
      rows,
    );
  },
};
