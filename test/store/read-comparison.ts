// Every read of the Store interface over one stored workload, with every
// filter, order, range and page: what two stores holding the same data must
// answer alike. Errors are answers too (a bad cursor, stats per session).
import { T0 } from '../core/scenario.js';
import type { Filters, GroupBy, Page, PageQuery, SessionOrder, Store, TimeRange } from '../../src/store/store.js';
import { InvalidQueryError } from '../../src/store/store.js';

export type Reader = Pick<
  Store,
  | 'breaks'
  | 'sessions'
  | 'recentSessionIds'
  | 'changedTools'
  | 'breakPrefixes'
  | 'sessionTurns'
  | 'stats'
  | 'totals'
  | 'breakCauses'
  | 'waitingUsage'
  | 'storedCounts'
  | 'externalBreaks'
  | 'gapRows'
  | 'lowRateStreams'
  | 'streamSnapshots'
  | 'coldTurns'
>;

const RANGES: TimeRange[] = [
  {},
  { from: T0 + 60_000 },
  { to: T0 + 120_000 },
  // Not on minute boundaries: rollups round the range outwards, turns do not.
  { from: T0 + 30_000, to: T0 + 190_000 },
  // Hours later: gap rollups are read in whole hours.
  { from: T0 + 2 * 3_600_000 },
];

const BREAK_FILTERS: Filters[] = [
  {},
  { model: ['claude-opus-4-5'] },
  { model: ['claude-sonnet-4-5', 'gpt-4o'], provider: ['anthropic', 'openai'] },
  { provider: ['bedrock'] },
  { agentId: ['sub'] },
  { agentId: ['main', 'compact'], reason: ['tools_order_changed', 'system_changed', 'model_changed'] },
  { reason: ['tools_order_changed'] },
  { model: ['unknown-model'] },
  { sessionId: ['s1'] },
  { sessionId: ['s2'], agentId: ['main'] },
  { sessionId: ['s1', 's2', 'nope'], model: ['gpt-4o-mini', 'claude-sonnet-4-5-20250929'] },
];

const SESSION_FILTERS: Filters[] = [
  {},
  { agentId: ['main'] },
  { agentId: ['sub', 'compact'] },
  { agentId: ['nobody'] },
  { sessionId: ['s2'] },
  { sessionId: ['s1', 'nope'], agentId: ['main', 'sub'] },
];

const GROUPINGS: (GroupBy | undefined)[] = [undefined, 'model', 'provider', 'agentId', 'reason'];
const ORDERS: SessionOrder[] = ['recent', 'worst_cache_rate', 'extra_cost'];

/** Every page, following nextCursor (at most 200 pages). */
async function pages<T>(read: (page: PageQuery) => Promise<Page<T>>, limit: number): Promise<Page<T>[]> {
  const out: Page<T>[] = [];
  let cursor: string | undefined;
  for (let i = 0; i < 200; i++) {
    const page = await read(cursor === undefined ? { limit } : { limit, cursor });
    out.push(page);
    if (page.nextCursor === null) break;
    cursor = page.nextCursor;
  }
  return out;
}

/** The answer, or the error as the API would report it. */
async function answer(read: () => Promise<unknown>): Promise<unknown> {
  try {
    return await read();
  } catch (error) {
    if (error instanceof InvalidQueryError) return { invalid: error.field, message: error.message };
    throw error;
  }
}

/** Labelled answers to every read of `project`, in a fixed order. */
export async function everyRead(r: Reader, project: string, requestIds: readonly string[]): Promise<[string, unknown][]> {
  const out: [string, unknown][] = [];
  const read = async (label: string, run: () => Promise<unknown>) => out.push([label, await answer(run)]);
  for (const range of RANGES) {
    const at = JSON.stringify(range);
    for (const filters of BREAK_FILTERS) {
      const f = JSON.stringify(filters);
      await read(`breaks ${at} ${f}`, () => pages((page) => r.breaks(project, range, filters, page), 2));
      await read(`changedTools ${at} ${f}`, () => r.changedTools(project, range, filters, 100));
      await read(`changedTools top 1 ${at} ${f}`, () => r.changedTools(project, range, filters, 1));
      await read(`breakCauses ${at} ${f}`, () => r.breakCauses(project, range, filters));
    }
    for (const filters of SESSION_FILTERS) {
      for (const order of ORDERS) {
        const label = `sessions ${order} ${at} ${JSON.stringify(filters)}`;
        await read(label, () => pages((page) => r.sessions(project, range, filters, page, order), 1));
        await read(`${label} one page`, () => r.sessions(project, range, filters, { limit: 10 }, order));
      }
    }
    for (const limit of [1, 2, 10]) await read(`recentSessionIds ${at} ${limit}`, () => r.recentSessionIds(project, range, limit));
    for (const filters of BREAK_FILTERS) {
      const f = JSON.stringify(filters);
      for (const groupBy of GROUPINGS) {
        for (const intervalMs of [60_000, 5 * 60_000, 24 * 3_600_000]) {
          await read(`stats ${intervalMs} ${groupBy} ${at} ${f}`, () => r.stats(project, { ...range, intervalMs, filters, ...(groupBy ? { groupBy } : {}) }));
        }
        await read(`totals ${groupBy} ${at} ${f}`, () => r.totals(project, { ...range, filters, ...(groupBy ? { groupBy } : {}) }));
      }
    }
    // The insights' reads: they take the session and agent filters.
    for (const filters of SESSION_FILTERS) {
      const f = JSON.stringify(filters);
      await read(`gapRows ${at} ${f}`, () => r.gapRows(project, range, filters));
      for (const [minTurns, maxRate, limit] of [[1, 1, 100], [2, 0.5, 100], [1, 0.9, 1], [1, 0, 10]] as const) {
        await read(`lowRateStreams ${minTurns} ${maxRate} ${limit} ${at} ${f}`, () => r.lowRateStreams(project, range, filters, minTurns, maxRate, limit));
      }
      for (const limit of [1, 3, 1_000]) await read(`coldTurns ${limit} ${at} ${f}`, () => r.coldTurns(project, range, filters, limit));
    }
    for (const filters of [{}, { sessionId: ['sess-2'] }, { agentId: ['main'] }, { sessionId: ['sess-1', 's1'], agentId: ['agent:explore'] }]) {
      await read(`externalBreaks ${at} ${JSON.stringify(filters)}`, () => pages((page) => r.externalBreaks(project, range, filters, page), 2));
    }
  }
  for (const sessionId of ['s1', 's2', 'nope']) await read(`sessionTurns ${sessionId}`, () => r.sessionTurns(project, sessionId));
  for (const [sessionId, agentId] of [['s1', 'main'], ['s2', 'sub'], ['s1', 'compact'], ['a-tie', 'main'], ['nope', 'main'], ['s1', 'nobody']]) {
    for (const limit of [1, 3, 1_000]) {
      await read(`streamSnapshots ${sessionId} ${agentId} ${limit}`, () => r.streamSnapshots(project, sessionId!, agentId!, limit));
    }
  }
  for (const requestId of [...requestIds, 'nope']) await read(`breakPrefixes ${requestId}`, () => r.breakPrefixes(project, requestId));
  await read('waitingUsage', () => r.waitingUsage(project));
  await read('waitingUsage of every project', () => r.waitingUsage());
  await read('storedCounts', () => r.storedCounts());
  // Cursors this server did not issue, or of another list.
  const stale = Buffer.from(JSON.stringify([T0, 'x'])).toString('base64url');
  for (const cursor of ['nonsense', stale, '']) {
    await read(`breaks cursor ${cursor}`, () => r.breaks(project, {}, {}, { limit: 2, cursor }));
    await read(`externalBreaks cursor ${cursor}`, () => r.externalBreaks(project, {}, {}, { limit: 2, cursor }));
    for (const order of ORDERS) await read(`sessions ${order} cursor ${cursor}`, () => r.sessions(project, {}, {}, { limit: 2, cursor }, order));
  }
  return out;
}
