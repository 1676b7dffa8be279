// The breaks of a range grouped by the fingerprint of their cause
// (core/fingerprint.ts): one row per cause with how often, in how many
// sessions, when first and last, and what it cost. Read through the Store, so
// both stores answer alike; bounded to the newest MAX_SCANNED breaks.
import { breakFingerprint } from '../core/fingerprint.js';
import { Tally } from '../core/insights/money.js';
import type { BreakCause, BreakReason, BreakRecord } from '../core/types.js';
import { readPages } from './paging.js';
import type { Filters, PageQuery, Store, TimeRange } from './store.js';

/** Breaks read per call at most, newest first; beyond them the answer says `truncated`. */
export const MAX_SCANNED = 50_000;

export interface FingerprintRow {
  fingerprint: string;
  reason: BreakReason;
  cause: BreakCause | null;
  /** The changed part, as the earliest break of the cause names it. */
  provider: string | null;
  model: string | null;
  changedToolNames: string[];
  changedSystemBlocks: number[] | null;
  changedParams: string[];
  breaks: number;
  sessions: number;
  firstSeen: number;
  lastSeen: number;
  /** The agent's version of the earliest break (the release that introduced the cause); null when unknown. */
  agentVersion: string | null;
  /** The sum over the breaks with a known price; null when every one is unpriced. */
  estimatedExtraCostUsd: number | null;
}

export interface Fingerprints {
  rows: FingerprintRow[];
  /** Breaks grouped. */
  breaks: number;
  /** More breaks lay in the range than were read: the oldest are left out. */
  truncated: boolean;
}

interface Group {
  row: FingerprintRow;
  sessions: Set<string>;
  /** The priced breaks' cost, in micro-dollars so that it adds exactly. */
  cost: Tally;
}

/** The part of a row that its earliest break names. */
function exampleOf(record: BreakRecord) {
  const { provider, model, changedToolNames, changedSystemBlocks, changedParams, agentVersion } = record;
  return { firstSeen: record.ts, provider, model, changedToolNames, changedSystemBlocks, changedParams, agentVersion };
}

function add(groups: Map<string, Group>, record: BreakRecord): void {
  const fingerprint = breakFingerprint(record);
  let group = groups.get(fingerprint);
  if (group === undefined) {
    const row = { fingerprint, reason: record.reason, cause: record.cause, ...exampleOf(record), breaks: 0, sessions: 0, lastSeen: record.ts, estimatedExtraCostUsd: null };
    group = { row, sessions: new Set(), cost: new Tally() };
    groups.set(fingerprint, group);
  }
  const row = group.row;
  group.sessions.add(record.sessionId);
  row.breaks++;
  row.sessions = group.sessions.size;
  // Pages come newest first, but a row keeps its earliest break whatever the order.
  if (record.ts < row.firstSeen) Object.assign(row, exampleOf(record));
  if (record.ts > row.lastSeen) row.lastSeen = record.ts;
  group.cost.add(record.estimatedExtraCostUsd);
  row.estimatedExtraCostUsd = group.cost.priced.usd;
}

/** The causes of the range's newest `max` breaks, most costly first, then most frequent. */
export async function fingerprintsOf(store: Store, project: string, range: TimeRange, filters: Filters, max = MAX_SCANNED): Promise<Fingerprints> {
  const groups = new Map<string, Group>();
  const read = (page: PageQuery) => store.breaks(project, range, filters, page);
  const { read: scanned, cursor } = await readPages(read, max, (records) => {
    for (const record of records) add(groups, record);
  });
  // A full last page may still be the end of the range.
  const truncated = cursor !== undefined && (await read({ limit: 1, cursor })).items.length > 0;
  const rows = [...groups.values()].map((g) => g.row);
  rows.sort(
    (a, b) =>
      (b.estimatedExtraCostUsd ?? 0) - (a.estimatedExtraCostUsd ?? 0) ||
      b.breaks - a.breaks ||
      (a.fingerprint < b.fingerprint ? -1 : a.fingerprint > b.fingerprint ? 1 : 0),
  );
  return { rows, breaks: scanned, truncated };
}
