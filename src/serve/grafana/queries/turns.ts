// One session's turns in order, each with its state, usage and, at a miss,
// the break: the session drill-down. Only this session's turns are read.
import { cacheRate } from '../../../core/rate.js';
import { frame } from '../frame.js';
import { badParameter, filtersParam, variableValues } from '../params.js';
import { filterDocs, type GrafanaQuery } from '../query.js';

export const turnsQuery: GrafanaQuery = {
  name: 'turns',
  summary:
    "One session's turns in order (an unknown session has none): {ts, seq, requestId, agentId, model, provider, state (pending: no usage yet), uncached, read, write, output, cacheRate, reason, cause, changedToolNames, missedCacheReadTokens, estimatedExtraCostUsd, expectMiss}; break fields are empty or null on turns that did not break",
  params: {
    sessionId: { doc: 'the session (required, one)' },
    ...filterDocs('agentId'),
  },
  async run({ store, project }, params) {
    const sessions = variableValues(params('sessionId'));
    if (sessions?.length !== 1) throw badParameter('sessionId', 'expected exactly one session', 'e.g. sessionId=${sessionId}');
    const { agentId } = filtersParam(params, ['agentId', 'sessionId']);
    const turns = (await store.sessionTurns(project, sessions[0]!)) ?? [];
    const rows = turns
      .filter((t) => !agentId || agentId.includes(t.agentId))
      .map((t, i) => {
        const u = t.usage;
        const b = t.break;
        return [
          t.ts,
          i + 1,
          t.requestId,
          t.agentId,
          t.model ?? '',
          t.provider ?? '',
          t.state ?? 'pending',
          u?.uncached ?? null,
          u?.read ?? null,
          u?.write ?? null,
          u?.output ?? null,
          u?.cacheReported ? cacheRate(u) : null,
          b?.reason ?? '',
          b?.cause ?? '',
          b?.changedToolNames.join(', ') ?? '',
          b?.missedCacheReadTokens ?? null,
          b?.estimatedExtraCostUsd ?? null,
          t.expectMiss ?? '',
        ];
      });
    return frame(
      'table',
      [
        ['ts', 'time'],
        ['seq', 'number'],
        ['requestId', 'string'],
        ['agentId', 'string'],
        ['model', 'string'],
        ['provider', 'string'],
        ['state', 'string'],
        ['uncached', 'number'],
        ['read', 'number'],
        ['write', 'number'],
        ['output', 'number'],
        ['cacheRate', 'number'],
        ['reason', 'string'],
        ['cause', 'string'],
        ['changedToolNames', 'string'],
        ['missedCacheReadTokens', 'number'],
        ['estimatedExtraCostUsd', 'number'],
        ['expectMiss', 'string'],
      ],
      rows,
    );
  },
};
