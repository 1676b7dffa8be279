// Tokens by kind over time, in long form ({ts, kind, tokens}): Infinity turns
// it into one series per kind, a kind added later needs no dashboard change,
// and simPod gets one series per kind from the same rows.
import { frame, type Cell } from '../frame.js';
import { filtersParam, intervalParam, rangeParam } from '../params.js';
import { filterDocs, INTERVAL, RANGE, type GrafanaQuery } from '../query.js';

/** The kinds of the turns' usage: the cache rate's population, output, then input outside the rate. */
export const TOKEN_KINDS = ['uncached', 'read', 'write', 'output', 'unreported_input'] as const;

export const tokensQuery: GrafanaQuery = {
  name: 'tokens',
  summary:
    'Tokens per bucket by kind (uncached, read, write of turns that reported cache usage, so read / (uncached + read + write) is the cache rate; output of every turn; unreported_input: input of turns that reported no cache field; reported_<kind> for tokens harnesses exported as metrics, with no turns behind them): {ts, kind, tokens}',
  params: { ...RANGE, ...INTERVAL, ...filterDocs('model', 'provider', 'agentId') },
  async run({ store, project, now }, params) {
    const range = rangeParam(params, now);
    const intervalMs = intervalParam(params, range);
    const filters = filtersParam(params, ['model', 'provider', 'agentId']);
    const rows: Cell[][] = [];
    for (const row of await store.stats(project, { ...range, intervalMs, filters })) {
      if (row.turns > 0) {
        for (const kind of TOKEN_KINDS) rows.push([row.ts, kind, kind === 'unreported_input' ? row.unreportedInputTokens : row.tokens[kind]]);
      }
      for (const [kind, tokens] of Object.entries(row.reportedTokens ?? {})) rows.push([row.ts, `reported_${kind}`, tokens]);
    }
    return frame('series', [['ts', 'time'], ['kind', 'string'], ['tokens', 'number']], rows);
  },
};
