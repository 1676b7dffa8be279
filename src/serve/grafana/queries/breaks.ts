// The breaks table: newest first, each with what changed, what it cost, and
// what the harness itself reported of the same request.
import { harnessAgrees } from '../../../core/verdicts.js';
import { harnessReportsOf } from '../../../store/harness-breaks.js';
import { frame } from '../frame.js';
import { filtersParam, limitParam, rangeParam } from '../params.js';
import { filterDocs, limitDoc, RANGE, type GrafanaQuery } from '../query.js';

export const breaksQuery: GrafanaQuery = {
  name: 'breaks',
  summary:
    'Break records, newest first: {ts, sessionId, agentId, model, provider, reason, cause, changedToolNames ("a, b"), missedCacheReadTokens, estimatedExtraCostUsd (null: unknown price), gapMs, requestId, previousRequestId, harnessReason (the harness\'s own report of the request, verbatim; empty when none joined), harnessAgrees (yes, no, or empty)}',
  params: { ...RANGE, limit: limitDoc(500, 5000), ...filterDocs('model', 'provider', 'agentId', 'reason', 'sessionId') },
  async run({ store, project, now }, params) {
    const range = rangeParam(params, now);
    const limit = limitParam(params, 500, 5000);
    const filters = filtersParam(params, ['model', 'provider', 'agentId', 'reason', 'sessionId']);
    const page = await store.breaks(project, range, filters, { limit });
    const reports = await harnessReportsOf(store, project, page.items);
    const rows = page.items.map((b) => [
      b.ts,
      b.sessionId,
      b.agentId,
      b.model ?? '',
      b.provider ?? '',
      b.reason,
      b.cause ?? '',
      b.changedToolNames.join(', '),
      b.missedCacheReadTokens,
      b.estimatedExtraCostUsd,
      b.gapMs,
      b.requestId,
      b.previousRequestId,
      reports.get(b.requestId)?.reason ?? '',
      reports.has(b.requestId) ? (harnessAgrees(b.reason, reports.get(b.requestId)!.reason) ? 'yes' : 'no') : '',
    ]);
    return frame(
      'table',
      [
        ['ts', 'time'],
        ['sessionId', 'string'],
        ['agentId', 'string'],
        ['model', 'string'],
        ['provider', 'string'],
        ['reason', 'string'],
        ['cause', 'string'],
        ['changedToolNames', 'string'],
        ['missedCacheReadTokens', 'number'],
        ['estimatedExtraCostUsd', 'number'],
        ['gapMs', 'number'],
        ['requestId', 'string'],
        ['previousRequestId', 'string'],
        ['harnessReason', 'string'],
        ['harnessAgrees', 'string'],
      ],
      rows,
    );
  },
};
