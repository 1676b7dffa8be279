// Cache rate over time (SPEC §5: writes counted, sum over sums), optionally
// one series per model, provider or agent. Every bucket of the range has a
// row: null where nothing reported cache usage, so a line never bridges a gap.
import { bucketStarts } from '../buckets.js';
import { frame, type Cell } from '../frame.js';
import { choiceParam, filtersParam, intervalParam, rangeParam } from '../params.js';
import { filterDocs, INTERVAL, RANGE, type GrafanaQuery } from '../query.js';

const GROUPS = ['none', 'model', 'provider', 'agentId'] as const;

export const cacheRateQuery: GrafanaQuery = {
  name: 'cache-rate',
  summary: 'Cache rate per bucket, writes counted, null where no turn reported cache usage: {ts, cacheRate}, or {ts, <groupBy>, cacheRate}',
  params: {
    ...RANGE,
    ...INTERVAL,
    groupBy: { doc: 'none (default), model, provider or agentId: one series per value', choices: GROUPS },
    ...filterDocs('model', 'provider', 'agentId'),
  },
  async run({ store, project, now }, params) {
    const range = rangeParam(params, now);
    const intervalMs = intervalParam(params, range);
    const groupBy = choiceParam(params, 'groupBy', GROUPS, 'none');
    const filters = filtersParam(params, ['model', 'provider', 'agentId']);
    const stats = await store.stats(project, { ...range, intervalMs, filters, ...(groupBy === 'none' ? {} : { groupBy }) });
    const rates = new Map(stats.map((row) => [`${row.ts}\u0000${row.group ?? ''}`, row.cacheRate]));
    const groups = groupBy === 'none' ? [undefined] : [...new Set(stats.map((row) => row.group ?? ''))].sort();
    const rows: Cell[][] = [];
    for (const ts of bucketStarts(range, intervalMs)) {
      for (const group of groups) {
        const rate = rates.get(`${ts}\u0000${group ?? ''}`) ?? null;
        rows.push(group === undefined ? [ts, rate] : [ts, group, rate]);
      }
    }
    const columns: [string, 'time' | 'string' | 'number'][] =
      groupBy === 'none' ? [['ts', 'time'], ['cacheRate', 'number']] : [['ts', 'time'], [groupBy, 'string'], ['cacheRate', 'number']];
    return frame('series', columns, rows);
  },
};
