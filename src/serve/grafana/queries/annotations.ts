// Breaks as annotations: a marker on every time series at the moment the
// cache broke, saying why. Columns are Grafana's annotation fields (text,
// title, tags), with the time as `ts` like every other endpoint (the
// dashboards' Infinity target names it `time`); text comes first because the
// simPod path takes the first string field as the text.
import type { BreakRecord } from '../../../core/types.js';
import { frame } from '../frame.js';
import { filtersParam, limitParam, rangeParam } from '../params.js';
import { filterDocs, limitDoc, RANGE, type GrafanaQuery } from '../query.js';

function describe(b: BreakRecord): string {
  const parts = [`${b.reason}${b.cause ? ` (${b.cause})` : ''} in session ${b.sessionId}, agent ${b.agentId}${b.model ? `, ${b.model}` : ''}`];
  if (b.changedToolNames.length > 0) parts.push(`changed tools: ${b.changedToolNames.join(', ')}`);
  const cost = b.estimatedExtraCostUsd === null ? '' : `, about $${b.estimatedExtraCostUsd.toFixed(4)} extra`;
  parts.push(`${b.missedCacheReadTokens.toLocaleString('en-US')} cache-read tokens missed${cost}`);
  return parts.join('; ');
}

export const annotationsQuery: GrafanaQuery = {
  name: 'annotations',
  summary: 'Breaks as annotations, newest first: {ts, text, title, tags ("cache-break,<reason>,<model>,<agentId>")}',
  params: { ...RANGE, limit: limitDoc(1000, 5000), ...filterDocs('model', 'provider', 'agentId', 'reason', 'sessionId') },
  async run({ store, project, now }, params) {
    const range = rangeParam(params, now);
    const limit = limitParam(params, 1000, 5000);
    const filters = filtersParam(params, ['model', 'provider', 'agentId', 'reason', 'sessionId']);
    const page = await store.breaks(project, range, filters, { limit });
    const rows = page.items.map((b) => [
      b.ts,
      describe(b),
      `Cache break: ${b.reason}`,
      ['cache-break', b.reason, b.model ?? '', b.agentId].filter((tag) => tag !== '' && !tag.includes(',')).join(','),
    ]);
    return frame('table', [['ts', 'time'], ['text', 'string'], ['title', 'string'], ['tags', 'string']], rows);
  },
};
