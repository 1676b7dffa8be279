// Times leave the REST API as RFC 3339 strings (null for a stored value that is
// no time); everything else as stored, a break with the fingerprint of its
// cause beside it (computed when read: core/fingerprint.ts).
import { breakFingerprint } from '../../core/fingerprint.js';
import type { BreakRecord } from '../../core/types.js';
import type { FingerprintRow } from '../../store/fingerprints.js';
import type { SessionSummary, StatsRow, TurnView } from '../../store/store.js';
import { storedIso as iso } from '../../time.js';

export type WireBreak = Omit<BreakRecord, 'ts'> & { ts: string | null; fingerprint: string };

export function wireBreak(record: BreakRecord): WireBreak {
  return { ...record, ts: iso(record.ts), fingerprint: breakFingerprint(record) };
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

export function wireFingerprint(row: FingerprintRow) {
  return { ...row, firstSeen: iso(row.firstSeen), lastSeen: iso(row.lastSeen) };
}
