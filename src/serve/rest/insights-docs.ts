// The insight routes for the API reference (docs/api.md, GET /v1).
import type { RouteDoc } from './docs.js';

const PARAMS = {
  from: 'start, inclusive: RFC 3339 or epoch ms (default 7 days before to)',
  to: 'end, exclusive: RFC 3339 or epoch ms (default now)',
  sessionId: 'only these sessions (repeat or comma-separate for several)',
  agentId: 'only these agents',
  model: 'only these models',
  provider: 'only these providers',
};

/** Dollars over several breaks or turns, as every insight gives them. */
const MONEY = '{usd, unpriced}: usd sums the priced ones (null when every one is unpriced), unpriced counts the others';

export const INSIGHT_ROUTE_DOCS: RouteDoc[] = [
  {
    method: 'GET',
    path: '/v1/insights/avoidable',
    summary: `Breaks a known fix would have prevented (docs/insights.md#avoidable-breaks): {fixes: [{fix (stable_tool_order | volatile_block_after_breakpoint | breakpoint_within_lookback), reason, advice, breaks, missedCacheReadTokens, savings, involved: [{name (a tool, system:k, or how far the next breakpoint lay: "25 blocks", "no later breakpoint"), breaks}], examples (request ids, newest first)}], breaks, missedCacheReadTokens, savings}; savings ${MONEY}`,
    params: PARAMS,
  },
  {
    method: 'GET',
    path: '/v1/insights/volatile',
    summary: `Volatile prefix parts (docs/insights.md#volatile-prefix-parts): the system blocks and tools whose changes broke the cache, by the re-write cost those breaks caused, most first: {parts: [{kind (system_block | tool), name (system:k, or the tool's name), breaks, sessions, days, missedCacheReadTokens, cost, latestRequestId}]}; cost ${MONEY}`,
    params: { ...PARAMS, limit: 'parts, 1–1000 (default 20)' },
  },
  {
    method: 'GET',
    path: '/v1/insights/chronic',
    summary: `Chronic misses (docs/insights.md#chronic-misses): streams seen in the range with at least 4 turns that reported cache usage and a cache rate under 20 % over their life, the most input not read first, each with the likely cause named from its newest snapshots: {streams: [{sessionId, agentId, firstSeen, lastSeen, turns, measuredTurns, cacheRate, unreadTokens (uncached + written), readTokens, writtenTokens, cause (below_minimum | no_breakpoint | leading_volatile_block | lookback_exceeded | unknown), advice, breaks, breakCost}]}; breakCost ${MONEY}`,
    params: { from: PARAMS.from, to: PARAMS.to, sessionId: PARAMS.sessionId, agentId: PARAMS.agentId, limit: 'streams, 1–200 (default 20)' },
  },
  {
    method: 'GET',
    path: '/v1/insights/fanout',
    summary: `Fan-out cold starts (docs/insights.md#fan-out-cold-starts): cold turns of one (model family, tools, system) prefix starting within 30 s of the first of them, each writing the prefix again, the most written again first: {fanOuts: [{model, ts, turns, sessions, requestIds (the first, then the others), writtenOnceTokens, writtenAgainTokens (of each later turn's write, the part it could have shared: tools, system and the messages in common, sized from raw bodies; without a size estimate, as much as the first wrote), cost}], fanOutCount, writtenAgainTokens, cost, advice}; cost (of the tokens written again beyond reading them) ${MONEY}`,
    params: { from: PARAMS.from, to: PARAMS.to, sessionId: PARAMS.sessionId, agentId: PARAMS.agentId, limit: 'fan-outs listed, 1–1000 (default 20)' },
  },
  {
    method: 'GET',
    path: '/v1/insights/agreement',
    summary:
      "Agreement as confusion tables (docs/insights.md#agreement): cachebreak's verdict against the harness's report ([PROMPT CACHE BREAK], joined as in /v1/breaks) and against the provider's diagnosis (Anthropic's cache_miss_reason, OpenAI's prompt_cache_diagnostics reason), in the shared verdicts of /v1/breaks/agreement: {harness: [cell], provider: [cell]}, cell {cachebreak, other, breaks, agrees, disagreeing (request ids of its newest breaks when it disagrees, at most 10: GET /v1/breaks/:requestId, or /breaks/:requestId in the web UI)}; breaks a side gave no verdict on are left out of its table",
    params: PARAMS,
  },
  {
    method: 'GET',
    path: '/v1/insights/ttl',
    summary:
      'TTL advice (docs/insights.md#ttl-advice): per stream (session and agent) and model that wrote to the cache, {sessionId, agentId, model, provider, gaps: {first, within_5m, within_1h, over_1h} (turns by idle gap before them), currentTier (5m | 1h: the tier most of its writes used), advisedTier, stakeTokens (read at gaps of 5 min to 1 h under 1 h, written again under 5 m), writtenTokens, oneHourSavesUsd (what writing at 1 h instead of 5 m saved over these turns; negative: what it cost; null: unknown price), adviceSavesUsd (what the advised tier saves over the current one)}, most saved first, the first `limit`; groupCount (every group), changeCount (groups advised to change tier), adviceSavesUsd (the sum over the priced groups, all of them) and unpricedGroups. Gaps are kept per hour: the range is read in whole hours',
    params: { from: PARAMS.from, to: PARAMS.to, sessionId: PARAMS.sessionId, agentId: PARAMS.agentId, limit: 'groups listed, 1–1000 (default 20)' },
  },
];
