// How often the harness's own reports (Claude Code's [PROMPT CACHE BREAK]
// lines) and the provider's diagnosis (Anthropic's or OpenAI's) agree with cachebreak's
// reasons: the rate per side, and the table of verdicts behind it.
import { agreementOf } from '../../../store/harness-breaks.js';
import { frame } from '../frame.js';
import { filtersParam, rangeParam } from '../params.js';
import { filterDocs, RANGE, type GrafanaQuery } from '../query.js';

const FILTER_NAMES = ['model', 'provider', 'agentId', 'reason', 'sessionId'] as const;

export const agreementQuery: GrafanaQuery = {
  name: 'agreement',
  summary:
    "Agreement with cachebreak's reasons, one row per other side: {source (harness or provider), compared (breaks it gave a verdict on), agreed, rate (null when none compared), unjoinedReports (harness reports joined to no break)}",
  params: { ...RANGE, ...filterDocs(...FILTER_NAMES) },
  async run({ store, project, now }, params) {
    const found = await agreementOf(store, project, rangeParam(params, now), filtersParam(params, [...FILTER_NAMES]));
    return frame(
      'table',
      [
        ['source', 'string'],
        ['compared', 'number'],
        ['agreed', 'number'],
        ['rate', 'number'],
        ['unjoinedReports', 'number'],
      ],
      [
        ['harness', found.harness.compared, found.harness.agreed, found.harness.rate, found.harness.unjoinedReports],
        ['provider', found.provider.compared, found.provider.agreed, found.provider.rate, null],
      ],
    );
  },
};

export const verdictsQuery: GrafanaQuery = {
  name: 'verdicts',
  summary:
    "Breaks by the three verdicts on them, most first: {cachebreak, harness, provider, breaks}, in shared verdicts (model_changed, tools_changed, system_changed, cache_control_changed, request_params_changed, messages_rewritten, breakpoint_lookback_exceeded, no_change, unknown); harness or provider 'none' when it gave no verdict",
  params: { ...RANGE, ...filterDocs(...FILTER_NAMES) },
  async run({ store, project, now }, params) {
    const found = await agreementOf(store, project, rangeParam(params, now), filtersParam(params, [...FILTER_NAMES]));
    return frame(
      'table',
      [
        ['cachebreak', 'string'],
        ['harness', 'string'],
        ['provider', 'string'],
        ['breaks', 'number'],
      ],
      found.rows.map((row) => [row.cachebreak, row.harness ?? 'none', row.provider ?? 'none', row.breaks]),
    );
  },
};
