// The tools whose changes broke the cache most often.
import { frame } from '../frame.js';
import { filtersParam, limitParam, rangeParam } from '../params.js';
import { filterDocs, limitDoc, RANGE, type GrafanaQuery } from '../query.js';

export const changedToolsQuery: GrafanaQuery = {
  name: 'changed-tools',
  summary: 'Tools most often named in changedToolNames, most first: {tool, breaks}',
  params: { ...RANGE, limit: limitDoc(20, 1000), ...filterDocs('model', 'provider', 'agentId', 'reason', 'sessionId') },
  async run({ store, project, now }, params) {
    const range = rangeParam(params, now);
    const limit = limitParam(params, 20, 1000);
    const filters = filtersParam(params, ['model', 'provider', 'agentId', 'reason', 'sessionId']);
    const tools = await store.changedTools(project, range, filters, limit);
    return frame('table', [['tool', 'string'], ['breaks', 'number']], tools.map((t) => [t.name, t.breaks]));
  },
};
