// The insights (docs/insights.md) as Grafana tables: one query each, the
// same computation as GET /v1/insights/*.
import { readAvoidable } from '../../../insights/avoidable.js';
import { readChronicMisses } from '../../../insights/chronic.js';
import { readFanOuts } from '../../../insights/fanout.js';
import { insightPrices } from '../../../insights/prices.js';
import { readTtlAdvice } from '../../../insights/ttl.js';
import { readVolatileParts } from '../../../insights/volatile.js';
import { confusionOf } from '../../../store/harness-breaks.js';
import { frame } from '../frame.js';
import { filtersParam, limitParam, rangeParam } from '../params.js';
import { filterDocs, limitDoc, RANGE, type GrafanaQuery } from '../query.js';

const ALL = ['model', 'provider', 'agentId', 'sessionId'] as const;
const STREAMS = ['agentId', 'sessionId'] as const;
const MONEY = 'usd sums the priced ones (null when every one is unpriced), unpriced counts the others';

export const avoidableQuery: GrafanaQuery = {
  name: 'insights-avoidable',
  summary: `Avoidable breaks, one row per fix: {fix, reason, breaks, missedCacheReadTokens, savingsUsd, unpriced, involved (names, most breaks first), examples (request ids), advice}; ${MONEY}`,
  params: { ...RANGE, ...filterDocs(...ALL) },
  async run({ store, project, now }, params) {
    const found = await readAvoidable(store, project, rangeParam(params, now), filtersParam(params, [...ALL]));
    return frame(
      'table',
      [['fix', 'string'], ['reason', 'string'], ['breaks', 'number'], ['missedCacheReadTokens', 'number'], ['savingsUsd', 'number'], ['unpriced', 'number'], ['involved', 'string'], ['examples', 'string'], ['advice', 'string']],
      found.fixes.map((f) => [f.fix, f.reason, f.breaks, f.missedCacheReadTokens, f.savings.usd, f.savings.unpriced, f.involved.map((i) => `${i.name} (${i.breaks})`).join(', '), f.examples.join(', '), f.advice]),
    );
  },
};

export const volatileQuery: GrafanaQuery = {
  name: 'insights-volatile',
  summary: `Volatile prefix parts, the most re-write cost first: {kind, name, breaks, sessions, days, missedCacheReadTokens, costUsd, unpriced, latestRequestId}; ${MONEY}`,
  params: { ...RANGE, limit: limitDoc(20, 1000), ...filterDocs(...ALL) },
  async run({ store, project, now }, params) {
    const parts = await readVolatileParts(store, project, rangeParam(params, now), filtersParam(params, [...ALL]), limitParam(params, 20, 1000));
    return frame(
      'table',
      [['kind', 'string'], ['name', 'string'], ['breaks', 'number'], ['sessions', 'number'], ['days', 'number'], ['missedCacheReadTokens', 'number'], ['costUsd', 'number'], ['unpriced', 'number'], ['latestRequestId', 'string']],
      parts.map((p) => [p.kind, p.name, p.breaks, p.sessions, p.days, p.missedCacheReadTokens, p.cost.usd, p.cost.unpriced, p.latestRequestId]),
    );
  },
};

export const fanOutQuery: GrafanaQuery = {
  name: 'insights-fanout',
  summary: `Fan-out cold starts, the most written again first: {ts, model, turns, sessions, writtenOnceTokens, writtenAgainTokens, costUsd, unpriced, requestIds}; ${MONEY}`,
  params: { ...RANGE, limit: limitDoc(20, 1000), ...filterDocs(...STREAMS) },
  async run({ store, project, now, prices }, params) {
    const found = await readFanOuts(store, insightPrices(prices), project, rangeParam(params, now), filtersParam(params, [...STREAMS]), limitParam(params, 20, 1000));
    return frame(
      'table',
      [['ts', 'time'], ['model', 'string'], ['turns', 'number'], ['sessions', 'number'], ['writtenOnceTokens', 'number'], ['writtenAgainTokens', 'number'], ['costUsd', 'number'], ['unpriced', 'number'], ['requestIds', 'string']],
      found.fanOuts.map((f) => [f.ts, f.model, f.turns, f.sessions, f.writtenOnceTokens, f.writtenAgainTokens, f.cost.usd, f.cost.unpriced, f.requestIds.join(', ')]),
    );
  },
};

export const ttlQuery: GrafanaQuery = {
  name: 'insights-ttl',
  summary:
    'TTL advice per stream and model, what the advice saves first: {sessionId, agentId, model, provider, first, within5m, within1h, over1h (turns by idle gap), currentTier, advisedTier, oneHourSavesUsd (negative: 1 h costs), adviceSavesUsd (null: unknown price)}',
  params: { ...RANGE, limit: limitDoc(20, 1000), ...filterDocs(...STREAMS) },
  async run({ store, project, now, prices }, params) {
    const found = await readTtlAdvice(store, insightPrices(prices), project, rangeParam(params, now), filtersParam(params, [...STREAMS]), limitParam(params, 20, 1000));
    return frame(
      'table',
      [['sessionId', 'string'], ['agentId', 'string'], ['model', 'string'], ['provider', 'string'], ['first', 'number'], ['within5m', 'number'], ['within1h', 'number'], ['over1h', 'number'], ['currentTier', 'string'], ['advisedTier', 'string'], ['oneHourSavesUsd', 'number'], ['adviceSavesUsd', 'number']],
      found.groups.map((g) => [g.sessionId, g.agentId, g.model, g.provider, g.gaps.first, g.gaps.within_5m, g.gaps.within_1h, g.gaps.over_1h, g.currentTier, g.advisedTier, g.oneHourSavesUsd, g.adviceSavesUsd]),
    );
  },
};

export const chronicQuery: GrafanaQuery = {
  name: 'insights-chronic',
  summary: `Chronic misses, the most input not read first: {sessionId, agentId, turns, cacheRate, unreadTokens, cause, breaks, breakCostUsd, unpriced, advice}; ${MONEY}`,
  params: { ...RANGE, limit: limitDoc(20, 200), ...filterDocs(...STREAMS) },
  async run({ store, project, now }, params) {
    const found = await readChronicMisses(store, project, rangeParam(params, now), filtersParam(params, [...STREAMS]), limitParam(params, 20, 200));
    return frame(
      'table',
      [['sessionId', 'string'], ['agentId', 'string'], ['turns', 'number'], ['cacheRate', 'number'], ['unreadTokens', 'number'], ['cause', 'string'], ['breaks', 'number'], ['breakCostUsd', 'number'], ['unpriced', 'number'], ['advice', 'string']],
      found.streams.map((s) => [s.sessionId, s.agentId, s.turns, s.cacheRate, s.unreadTokens, s.cause, s.breaks, s.breakCost.usd, s.breakCost.unpriced, s.advice]),
    );
  },
};

export const confusionQuery: GrafanaQuery = {
  name: 'insights-agreement',
  summary: "Agreement confusion tables as one table: {side (harness or provider), cachebreak, other, breaks, agrees, disagreeing (request ids of the newest breaks of a cell that disagrees)}",
  params: { ...RANGE, ...filterDocs(...ALL) },
  async run({ store, project, now }, params) {
    const tables = await confusionOf(store, project, rangeParam(params, now), filtersParam(params, [...ALL]));
    const rows = (['harness', 'provider'] as const).flatMap((side) => tables[side].map((c) => [side, c.cachebreak, c.other, c.breaks, c.agrees ? 'yes' : 'no', c.disagreeing.join(', ')]));
    return frame('table', [['side', 'string'], ['cachebreak', 'string'], ['other', 'string'], ['breaks', 'number'], ['agrees', 'string'], ['disagreeing', 'string']], rows);
  },
};

export const INSIGHT_QUERIES: readonly GrafanaQuery[] = [avoidableQuery, volatileQuery, fanOutQuery, ttlQuery, chronicQuery, confusionQuery];
