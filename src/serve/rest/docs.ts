// What each read route accepts, declared beside the routes and used for the
// API reference (docs/api.md) and GET /v1.
import { ALERT_ROUTE_DOCS } from '../alerts.js';
import { GRAFANA_ROUTE_DOCS } from '../grafana/docs.js';
import { UI_ROUTE_DOCS } from '../ui/docs.js';
import { INSIGHT_ROUTE_DOCS } from './insights-docs.js';

export interface RouteDoc {
  method: 'GET' | 'POST';
  path: string;
  summary: string;
  params?: Record<string, string>;
}

const FILTERS = {
  sessionId: 'only these sessions (repeat or comma-separate for several)',
  agentId: 'only these agents',
  model: 'only these models',
  provider: 'only these providers',
  reason: 'only breaks with these reasons',
};

/** Filters on what is computed when read, not stored: any of them reads the first 50,000 breaks of the range, the cursor then an offset among the matches. */
const COMPUTED = {
  fingerprint: 'only breaks of these causes (fingerprints from GET /v1/breaks/fingerprints); with this or the two below, the first 50,000 breaks of the range are read',
  harnessAgreement: "agrees | disagrees | silent: only breaks where the harness's report (joined as below) names cachebreak's verdict, names another, or is missing",
  providerAgreement: "agrees | disagrees | silent: the same for the provider's diagnosis (docs/how-it-decides.md#the-providers-verdict)",
};

const RANGE = {
  from: 'start, inclusive: RFC 3339 or epoch ms',
  to: 'end, exclusive: RFC 3339 or epoch ms',
};

const PAGE = {
  limit: 'page size, 1–1000 (default 100)',
  cursor: 'the nextCursor of the previous page',
};

export const ROUTE_DOCS: RouteDoc[] = [
  {
    method: 'POST',
    path: '/v1/events',
    summary:
      'Ingest snapshot, usage and turn events: application/json ({"events":[…]} or an array) or application/x-ndjson, optionally gzip. Answers {accepted, duplicates, rejected:[{index, field, error}]}, and warnings:[{index, unknownKeys, message}] when an accepted event carried keys the contract does not know (ignored)',
  },
  { method: 'GET', path: '/v1/events/schema', summary: 'JSON Schema of one event, generated from the validation schemas' },
  ...(['logs', 'traces', 'metrics'] as const).map(
    (signal): RouteDoc => ({
      method: 'POST',
      path: `/v1/${signal}`,
      summary: `OTLP/HTTP ${signal} export: application/x-protobuf or application/json, optionally gzip. Answers an Export*ServiceResponse in the request's encoding (partial_success when records were rejected); failures as a google.rpc.Status`,
    }),
  ),
  {
    method: 'GET',
    path: '/v1/breaks',
    summary:
      "Break records (docs/how-it-decides.md#the-break-record), newest first, each with `harness`: the harness's own report of the same request (joined by session, time and cache figures; a debug log named after its process joins by time and cache figures alone) as {harness, reason (verbatim), verdicts, agrees, ts, sessionId, source, callNumber, file, line}, or null",
    params: { ...RANGE, ...FILTERS, ...COMPUTED, ...PAGE },
  },
  {
    method: 'GET',
    path: '/v1/breaks/agreement',
    summary:
      "How often the harness's reports and the provider's diagnosis (Anthropic's cache_miss_reason or OpenAI's prompt_cache_diagnostics reason, docs/how-it-decides.md#the-providers-verdict) agree with cachebreak's reasons, in shared verdicts (model_changed, tools_changed, system_changed, cache_control_changed, request_params_changed, messages_rewritten, breakpoint_lookback_exceeded, no_change, unknown): {breaks, harness: {compared, agreed, rate, unjoinedReports}, provider: {compared, agreed, rate, alone}, reasons: [{cachebreak, breaks, harness: {compared, agreed, rate}, provider: {compared, agreed, rate, alone}}], rows: [{cachebreak, harness, provider, breaks}]}; `alone`: breaks the provider said nothing on (ours stands alone: counted apart, never as disagreement); default range the last 24 h",
    params: { ...RANGE, ...FILTERS },
  },
  {
    method: 'GET',
    path: '/v1/breaks/fingerprints',
    summary:
      "The range's breaks grouped by the fingerprint of their cause (docs/how-it-decides.md#fingerprints), most costly first, then most frequent: {fingerprints: [{fingerprint, reason, cause, provider, model, changedToolNames, changedSystemBlocks, changedParams (the changed part as the cause's earliest break names it), breaks, sessions, firstSeen, lastSeen, agentVersion (the agent's version of the earliest break, the release that introduced the cause; null when unknown), estimatedExtraCostUsd (the sum over breaks with a known price; null when every one is unpriced)}], breaks (read), truncated (true when the range held more than the newest 50,000 breaks read)}; default range the last 24 h",
    params: { ...RANGE, ...FILTERS },
  },
  {
    method: 'GET',
    path: '/v1/breaks/:requestId',
    summary:
      "One break (as in /v1/breaks, with harness) beside the two prefixes it compares: baseline (the earlier turn's) and turn, each {model, tools: [{name, schemaHash}] in the order sent, systemBlockHashes, markers, params (hashes by name), ttlMs, partial} or null when not stored; names and hashes only, never content",
  },
  {
    method: 'GET',
    path: '/v1/breaks/external',
    summary:
      "Breaks a harness reported itself (Claude Code's [PROMPT CACHE BREAK] debug lines, read by tail), newest first, beside cachebreak's own: harness, sessionId, agentId, source, ts, reason (the harness's text, verbatim), callNumber, previousCacheReadTokens, currentCacheReadTokens, cacheCreationTokens, diffPath, file, line, and joined: the break of cachebreak's it joined ({sessionId, agentId, requestId, reason}: a debug log named after its process lands in the right session) or null",
    params: { ...RANGE, sessionId: FILTERS.sessionId, agentId: FILTERS.agentId, ...PAGE },
  },
  {
    method: 'POST',
    path: '/v1/breaks/external',
    summary:
      'Store harness-reported breaks (what tail --server sends): {"breaks":[{harness, sessionId, agentId, source, ts, reason, …}]}; the same report again is a duplicate. Answers {accepted, duplicates, rejected}',
  },
  ...INSIGHT_ROUTE_DOCS,
  {
    method: 'GET',
    path: '/v1/sessions',
    summary:
      'Sessions active in the range, most recent first, each with its totals: turns, breaks, cacheRate, tokens (uncached, read, write and write1h of the turns that reported cache usage, so that read / (uncached + read + write) is cacheRate; output of every turn), unreportedInputTokens (input of turns that reported no cache field, outside the rate), missedCacheReadTokens, estimatedExtraCostUsd (the sum over breaks with a known price; null when every break is unpriced) and unpricedBreaks (breaks of models with no known price)',
    params: {
      ...RANGE,
      sessionId: FILTERS.sessionId,
      agentId: 'only these agents: each session counts only their streams',
      order: 'recent (default) | worst_cache_rate | extra_cost',
      ...PAGE,
    },
  },
  {
    method: 'GET',
    path: '/v1/sessions/:sessionId/turns',
    summary: 'Every turn of a session in order, with its state, usage and break',
  },
  {
    method: 'GET',
    path: '/v1/stats',
    summary:
      'Per time bucket: turns, breaks, cacheRate (writes counted), tokens (uncached, read, write and write1h of the turns that reported cache usage, so that read / (uncached + read + write) is cacheRate; output of every turn), unreportedInputTokens (input of turns that reported no cache field, outside the rate), missedCacheReadTokens, estimatedExtraCostUsd (the sum over breaks with a known price; null when every break is unpriced) and unpricedBreaks (breaks of models with no known price). Answers {from, to, intervalMs, groupBy, buckets, waitingUsage}; waitingUsage: usage records stored but waiting for the snapshot or session that places them (in no bucket until they join; retention deletes those that never do), counted now whatever the range',
    params: {
      ...RANGE,
      interval: 'bucket width: 1m, 5m, 1h, 1d… (default 1h); default range: the last 24 h',
      groupBy: 'model | provider | agentId | reason | state (turns by state: cold, hit, miss, expected, uncached, unreported)',
      agentId: FILTERS.agentId,
      model: FILTERS.model,
      provider: FILTERS.provider,
      reason: FILTERS.reason,
    },
  },
  ...UI_ROUTE_DOCS,
  ...ALERT_ROUTE_DOCS,
  ...GRAFANA_ROUTE_DOCS,
  {
    method: 'GET',
    path: '/metrics',
    summary:
      'Prometheus text format: tokens by kind, turns by state (by project, model and provider: per project the --max-metric-models most used models, by turns, the others as model="other", provider="other"), breaks by reason with their missed tokens, extra cost (priced breaks) and unpriced count (cachebreak_breaks_unpriced_total), events by outcome, OTLP records waiting for their other half that were dropped (cachebreak_waiting_evicted_total{project, table, reason}: bytes over --max-waiting-bytes, or entries); gauge cachebreak_usage_waiting{project}: usage records waiting for their snapshot or session',
  },
  { method: 'GET', path: '/healthz', summary: 'The process is up' },
  { method: 'GET', path: '/readyz', summary: 'The database answers' },
];
