// The values a dashboard variable offers: those seen in the range, from the
// rollups (models, providers, agents, reasons) or the sessions' streams.
import { frame } from '../frame.js';
import { choiceParam, limitParam, rangeParam } from '../params.js';
import { limitDoc, RANGE, type GrafanaQuery } from '../query.js';

const DIMENSIONS = ['model', 'provider', 'agentId', 'reason', 'sessionId'] as const;

export const valuesQuery: GrafanaQuery = {
  name: 'values',
  summary: 'Values seen in the range, for dashboard variables: {value}; sessions most recent first, the rest sorted',
  params: {
    ...RANGE,
    dimension: { doc: 'model (default), provider, agentId, reason or sessionId', choices: DIMENSIONS },
    limit: limitDoc(500, 5000),
  },
  async run({ store, project, now }, params) {
    const range = rangeParam(params, now);
    const dimension = choiceParam(params, 'dimension', DIMENSIONS, 'model');
    const limit = limitParam(params, 500, 5000);
    let values: string[];
    if (dimension === 'sessionId') {
      values = await store.recentSessionIds(project, range, limit);
    } else {
      const totals = await store.totals(project, { ...range, filters: {}, groupBy: dimension });
      values = totals
        .filter((row) => row.group !== '' && (dimension !== 'reason' || row.breaks > 0))
        .map((row) => row.group!)
        .sort()
        .slice(0, limit);
    }
    return frame('table', [['value', 'string']], values.map((value) => [value]));
  },
};
