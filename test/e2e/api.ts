// Reading stored results back through the REST API, in the shapes the tests compare.
import { getJson } from './process.js';

export interface WireUsage {
  uncached: number;
  read: number;
  write: number;
  write1h: number;
  output: number;
  cacheReported: boolean;
}

export interface WireBreak {
  requestId: string;
  previousRequestId: string;
  sessionId: string;
  reason: string;
  changedToolNames: string[];
  [field: string]: unknown;
}

export interface WireTurn {
  requestId: string;
  agentId: string;
  ts: string;
  endTs: string | null;
  provider: string | null;
  model: string | null;
  state: string | null;
  usage: WireUsage | null;
  expectMiss: string | null;
  break: WireBreak | null;
}

export interface WireSession {
  sessionId: string;
  turns: number;
  breaks: number;
  [field: string]: unknown;
}

/** The day the test events happen on, so /v1/stats does not depend on the clock. */
export const STATS_RANGE = 'from=2026-11-30T00:00:00Z&to=2026-12-01T00:00:00Z';

export async function turnsOf(url: string, sessionId: string): Promise<WireTurn[]> {
  const body = await getJson<{ sessionId: string; turns: WireTurn[] }>(url, `/v1/sessions/${encodeURIComponent(sessionId)}/turns`);
  return body.turns;
}

/** The break records as the core makes them: `harness`, the harness's own report beside each, only when one joined. */
export async function breaksOf(url: string): Promise<WireBreak[]> {
  return (await breaksWithHarnessOf(url)).map(({ harness, ...record }) => (harness === null ? record : { ...record, harness })) as WireBreak[];
}

export async function breaksWithHarnessOf(url: string, query = 'limit=1000'): Promise<WireBreak[]> {
  const body = await getJson<{ breaks: WireBreak[]; nextCursor: string | null }>(url, `/v1/breaks?${query}`);
  return body.breaks;
}

export async function sessionsOf(url: string): Promise<WireSession[]> {
  const body = await getJson<{ sessions: WireSession[]; nextCursor: string | null }>(url, '/v1/sessions?limit=1000');
  return body.sessions;
}

export async function statsOf(url: string, query = 'interval=1m'): Promise<unknown> {
  return getJson(url, `/v1/stats?${STATS_RANGE}&${query}`);
}

/** Everything the API says about the given sessions: what two servers must agree on. */
export async function everything(url: string, sessionIds: readonly string[]) {
  const turns: Record<string, WireTurn[]> = {};
  for (const id of sessionIds) turns[id] = await turnsOf(url, id);
  return {
    turns,
    breaks: await breaksOf(url),
    sessions: await sessionsOf(url),
    stats: await statsOf(url),
    statsByReason: await statsOf(url, 'interval=1h&groupBy=reason'),
    statsByState: await statsOf(url, 'interval=1h&groupBy=state'),
  };
}

