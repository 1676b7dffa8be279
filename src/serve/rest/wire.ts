// Times leave the REST API as RFC 3339 strings (null for a stored value that is
// no time); everything else as stored.
import type { BreakRecord } from '../../core/types.js';
import type { SessionSummary, StatsRow, TurnView } from '../../store/store.js';
import { storedIso as iso } from '../../time.js';

export type WireBreak = Omit<BreakRecord, 'ts'> & { ts: string | null };

export function wireBreak(record: BreakRecord): WireBreak {
  return { ...record, ts: iso(record.ts) };
}

export function wireSession(session: SessionSummary) {
  return { ...session, firstSeen: iso(session.firstSeen), lastSeen: iso(session.lastSeen) };
}

export function wireTurn(turn: TurnView) {
  return {
    ...turn,
    ts: iso(turn.ts),
    endTs: turn.endTs === null ? null : iso(turn.endTs),
    break: turn.break ? wireBreak(turn.break) : null,
  };
}

export function wireStats(row: StatsRow) {
  return { ...row, ts: iso(row.ts) };
}
