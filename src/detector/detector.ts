// The detector in a harness's own process: the events of its requests, or
// each completed request, in; each turn's state and, on a miss, its break
// record (SPEC §6) out. It runs the server's rules (core/stream.ts) on the
// turns it keeps in memory, per stream, within a memory budget in bytes:
// what the server would decide for the same events, without a server.
import { cloneHistory, emptyHistory, fold, type History } from '../core/history.js';
import { mergeEvent, toTurn, type TurnParts } from '../core/join.js';
import { DEFAULT_DETECTION, type DetectionOptions } from '../core/options.js';
import { COMPACT_AGENT, compareTurns, evaluateOrdered, MAIN_AGENT } from '../core/stream.js';
import type { BreakRecord, CacheEvent, EpochMs, Evaluation, SnapshotContent, Turn, Usage } from '../core/types.js';
import { detachMessages, shareMessages } from './messages.js';

export interface DetectorOptions extends Partial<DetectionOptions> {
  /**
   * Memory kept, in estimated bytes (stats.bytes): beyond it the least
   * recently active sessions are forgotten, then the oldest turns of the
   * active one folded. Default 256 MiB.
   */
  maxBytes?: number;
  /** Sessions kept; the least recently active is forgotten first. Default 1,000. */
  maxSessions?: number;
  /** Turns kept per stream; older ones are folded into what later turns compare with. Default 1,000. */
  maxTurnsPerStream?: number;
  /** Events kept while they name no session yet (a usage before its snapshot). Default 1,000. */
  maxWaiting?: number;
  /** Called with each new break record. */
  onBreak?: (record: BreakRecord) => void;
}

/** One completed request, as a harness knows it. */
export interface CompletedRequest {
  requestId: string;
  sessionId: string;
  /** Default "main"; subagents and side queries get their own (SPEC §1). */
  agentId?: string;
  /** Request start, epoch ms. */
  ts: EpochMs;
  /** Response end, epoch ms. */
  endTs?: EpochMs;
  /** Time to first token. */
  ttftMs?: number;
  provider?: string;
  /** From snapshotFromRequest; without it the turn is judged on its usage alone. */
  snapshot?: SnapshotContent;
  /** The model, when there is no snapshot. */
  model?: string;
  /** From usageFromResponse. */
  usage: Usage;
  /** The harness knowingly reset the prefix (e.g. "compaction"). */
  expectMiss?: string;
  /** Provider cache diagnostics, kept as sent. */
  diagnostics?: unknown;
}

/** What the detector has dropped to stay within its bounds. */
export interface DetectorStats {
  /** Estimated bytes of the turns kept, held within maxBytes. */
  bytes: number;
  /** Sessions forgotten, least recently active first, beyond maxSessions or maxBytes. */
  sessionsEvicted: number;
  /** Turns folded away from a stream that held maxTurnsPerStream, or beyond maxBytes. */
  turnsFolded: number;
  /** Events for a turn older than every turn still kept of its stream: not judged. */
  tooLate: number;
  /** Events that named no session and were forgotten while waiting. */
  waitingDropped: number;
}

interface StreamState {
  /** The folded turns that are no longer kept. */
  base: History;
  /** Kept turns, in stream order. */
  turns: Turn[];
  /** `base` with every kept turn folded in: the next later turn is judged against it. */
  history: History;
  evaluations: Map<string, Evaluation>;
}

interface SessionState {
  streams: Map<string, StreamState>;
}

const newStream = (): StreamState => ({ base: emptyHistory(), turns: [], history: emptyHistory(), evaluations: new Map() });

function withoutTiers({ writerTiers: _, ...evaluation }: Evaluation & { writerTiers: unknown }): Evaluation {
  return evaluation;
}

const sameEvaluation = (a: Evaluation | undefined, b: Evaluation) => a !== undefined && JSON.stringify(a) === JSON.stringify(b);

/** Estimated bytes of a kept turn beside its messages: its objects, parts, place and evaluation. */
function turnBytes(turn: Turn): number {
  const prefix = turn.prefix;
  let bytes = 2_048 + 2 * turn.requestId.length;
  for (const tool of prefix?.tools ?? []) bytes += 96 + tool.name.length + (tool.schemaHash?.length ?? 0);
  for (const hash of prefix?.systemBlockHashes ?? []) bytes += 24 + hash.length;
  for (const marker of prefix?.markers ?? []) bytes += 24 + marker.length;
  bytes += 64 * Object.keys(prefix?.params ?? {}).length;
  if (turn.diagnostics !== undefined) bytes += JSON.stringify(turn.diagnostics)?.length ?? 0;
  return bytes;
}

/** The SPEC §2 event of a completed request: a turn, or a usage when it has no snapshot. */
export function completedEvent(request: CompletedRequest): CacheEvent {
  const event: CacheEvent = request.snapshot
    ? {
        ...request.snapshot,
        type: 'turn',
        requestId: request.requestId,
        sessionId: request.sessionId,
        agentId: request.agentId ?? MAIN_AGENT,
        ts: request.ts,
        usage: request.usage,
      }
    : {
        type: 'usage',
        requestId: request.requestId,
        sessionId: request.sessionId,
        agentId: request.agentId ?? MAIN_AGENT,
        ts: request.endTs ?? request.ts,
        usage: request.usage,
      };
  if (event.type === 'turn') {
    if (request.endTs !== undefined) event.endTs = request.endTs;
    if (request.expectMiss !== undefined) event.expectMiss = request.expectMiss;
  }
  if (request.ttftMs !== undefined) event.ttftMs = request.ttftMs;
  if (request.provider !== undefined) event.provider = request.provider;
  if (request.model !== undefined && event.type === 'usage') event.model = request.model;
  if (request.diagnostics !== undefined) event.diagnostics = request.diagnostics;
  return event;
}

/**
 * Judges each request of a harness as the server would (SPEC §4 v2), in
 * memory: per stream, the turns it keeps within its bounds.
 */
export class Detector {
  private readonly options: DetectionOptions;
  private readonly maxBytes: number;
  private readonly maxSessions: number;
  private readonly maxTurns: number;
  private readonly maxWaiting: number;
  private readonly onBreak: ((record: BreakRecord) => void) | undefined;
  /** Sessions, least recently active first. */
  private readonly sessions = new Map<string, SessionState>();
  /** The parts of every kept turn, and of events still waiting for a session. */
  private readonly parts = new Map<string, TurnParts>();
  /** Where each kept turn is: its session and agent. */
  private readonly placed = new Map<string, { sessionId: string; agentId: string }>();
  /** Estimated bytes of each kept turn, its messages included. */
  private readonly bytes = new Map<string, number>();
  /** Request ids of parts that name no session yet, oldest first. */
  private readonly waiting = new Set<string>();
  /** Its size, and what it dropped to stay within its bounds. */
  readonly stats: DetectorStats = { bytes: 0, sessionsEvicted: 0, turnsFolded: 0, tooLate: 0, waitingDropped: 0 };

  constructor(options: DetectorOptions = {}) {
    const { maxBytes, maxSessions, maxTurnsPerStream, maxWaiting, onBreak, ...detection } = options;
    this.options = { ...DEFAULT_DETECTION, ...detection };
    this.maxBytes = maxBytes ?? 256 * 1024 * 1024;
    this.maxSessions = maxSessions ?? 1_000;
    this.maxTurns = Math.max(1, maxTurnsPerStream ?? 1_000);
    this.maxWaiting = maxWaiting ?? 1_000;
    this.onBreak = onBreak;
  }

  /** A completed request: its state and, on a miss, its break record. Undefined when it repeats what is known or comes too late. */
  observe(request: CompletedRequest): Evaluation | undefined {
    const event = completedEvent(request);
    return this.add(event).find((evaluation) => evaluation.requestId === request.requestId);
  }

  /**
   * Any SPEC §2 event, in any order and repetition (SPEC §4.11). Returns the
   * evaluations it made new or changed: its own turn's, and those of later
   * turns of the stream that it moved.
   */
  add(event: CacheEvent): Evaluation[] {
    const merged = mergeEvent(this.parts.get(event.requestId), event);
    if (merged.duplicate) return [];
    const turn = toTurn(merged.parts);
    if (turn === undefined) {
      this.wait(event.requestId, merged.parts);
      return [];
    }
    this.waiting.delete(event.requestId);
    const session = this.session(turn.sessionId);
    const stream = session.streams.get(turn.agentId) ?? newStream();
    const last = stream.turns.at(-1) ?? stream.base.last;
    const known = this.placed.get(turn.requestId);
    if (known === undefined && stream.base.last !== undefined && compareTurns(turn, stream.base.last) <= 0) {
      this.stats.tooLate++;
      this.parts.delete(turn.requestId);
      return [];
    }
    session.streams.set(turn.agentId, stream);
    this.parts.set(turn.requestId, merged.parts);
    this.placed.set(turn.requestId, { sessionId: turn.sessionId, agentId: turn.agentId });

    const changed: Evaluation[] = [];
    if (known !== undefined) {
      // The turn was kept before: take it out of where it was, and judge that stream again.
      const was = this.sessions.get(known.sessionId) ?? session;
      const before = was.streams.get(known.agentId)!;
      before.turns = before.turns.filter((kept) => kept.requestId !== turn.requestId);
      before.evaluations.delete(turn.requestId);
      if (before !== stream) changed.push(...this.reevaluate(was, known.agentId, before));
    }
    if (known === undefined && (last === undefined || compareTurns(turn, last) > 0)) {
      // The usual case: the latest turn of its stream, judged against what came before.
      stream.turns.push(turn);
      const [evaluation] = evaluateOrdered(stream.history, [turn], this.options, this.compactionsFor(session, turn.agentId));
      if (evaluation) changed.push(this.record(stream, withoutTiers(evaluation)));
    } else {
      const at = stream.turns.findIndex((kept) => compareTurns(turn, kept) < 0);
      stream.turns.splice(at < 0 ? stream.turns.length : at, 0, turn);
      changed.push(...this.reevaluate(session, turn.agentId, stream));
    }
    // A compaction before the main stream's latest turn changes what follows it (SPEC §4.9).
    const main = session.streams.get(MAIN_AGENT);
    if (turn.agentId === COMPACT_AGENT && main?.turns.length && compareTurns(turn, main.turns.at(-1)!) < 0) {
      changed.push(...this.reevaluate(session, MAIN_AGENT, main));
    }
    // Its messages as what they share with the stream's latest turn before it, then the rest.
    const shared = turn.prefix ? shareMessages(turn.prefix, last?.prefix) : 0;
    this.account(turn.requestId, turnBytes(turn) + shared);
    this.fold(stream, this.maxTurns);
    this.withinBytes(stream);
    return changed;
  }

  /** The latest evaluation of a kept turn. */
  evaluation(requestId: string): Evaluation | undefined {
    const place = this.placed.get(requestId);
    return place && this.sessions.get(place.sessionId)?.streams.get(place.agentId)?.evaluations.get(requestId);
  }

  /** The current break records of the kept turns, per session. */
  breaks(sessionId: string): BreakRecord[] {
    const session = this.sessions.get(sessionId);
    if (!session) return [];
    return [...session.streams.values()].flatMap((stream) => [...stream.evaluations.values()].flatMap((e) => (e.break ? [e.break] : [])));
  }

  private compactionsFor(session: SessionState, agentId: string): Turn[] {
    return agentId === MAIN_AGENT ? (session.streams.get(COMPACT_AGENT)?.turns ?? []) : [];
  }

  /** Judges a stream's kept turns again from its base; returns the evaluations that changed. */
  private reevaluate(session: SessionState, agentId: string, stream: StreamState): Evaluation[] {
    stream.history = cloneHistory(stream.base);
    const fresh = evaluateOrdered(stream.history, stream.turns, this.options, this.compactionsFor(session, agentId));
    const changed: Evaluation[] = [];
    const kept = new Set<string>();
    for (const evaluation of fresh) {
      kept.add(evaluation.requestId);
      const plain = withoutTiers(evaluation);
      if (!sameEvaluation(stream.evaluations.get(plain.requestId), plain)) changed.push(this.record(stream, plain));
    }
    for (const requestId of [...stream.evaluations.keys()]) if (!kept.has(requestId)) stream.evaluations.delete(requestId);
    return changed;
  }

  private record(stream: StreamState, evaluation: Evaluation): Evaluation {
    const before = stream.evaluations.get(evaluation.requestId);
    stream.evaluations.set(evaluation.requestId, evaluation);
    if (evaluation.break && !before?.break) this.onBreak?.(evaluation.break);
    return evaluation;
  }

  /** Keeps a stream within `keep` turns: its oldest turns go into its base. */
  private fold(stream: StreamState, keep: number): void {
    while (stream.turns.length > keep) {
      const oldest = stream.turns.shift()!;
      fold(stream.base, oldest);
      stream.evaluations.delete(oldest.requestId);
      this.forget(oldest.requestId);
      this.stats.turnsFolded++;
      // The kept turns whose messages leaned on it hold theirs whole.
      for (const kept of stream.turns) {
        const messages = kept.prefix && oldest.prefix && detachMessages(kept.prefix, oldest.prefix);
        if (messages !== undefined) this.account(kept.requestId, turnBytes(kept) + messages);
      }
    }
  }

  /** Keeps the estimated bytes within maxBytes: the least recently active sessions go, then the oldest turns of `active`. */
  private withinBytes(active: StreamState): void {
    while (this.stats.bytes > this.maxBytes && this.sessions.size > 1) this.evict();
    if (this.stats.bytes > this.maxBytes && active.turns.length > 1) {
      let keep = active.turns.length;
      while (this.stats.bytes > this.maxBytes && keep > 1) this.fold(active, --keep);
    }
  }

  private account(requestId: string, bytes: number): void {
    this.stats.bytes += bytes - (this.bytes.get(requestId) ?? 0);
    this.bytes.set(requestId, bytes);
  }

  private forget(requestId: string): void {
    this.parts.delete(requestId);
    this.placed.delete(requestId);
    this.stats.bytes -= this.bytes.get(requestId) ?? 0;
    this.bytes.delete(requestId);
  }

  /** Forgets the least recently active session. */
  private evict(): void {
    const [oldestId, oldest] = this.sessions.entries().next().value!;
    this.sessions.delete(oldestId);
    for (const stream of oldest.streams.values()) for (const turn of stream.turns) this.forget(turn.requestId);
    this.stats.sessionsEvicted++;
  }

  private wait(requestId: string, parts: TurnParts): void {
    this.parts.set(requestId, parts);
    this.waiting.delete(requestId);
    this.waiting.add(requestId);
    while (this.waiting.size > this.maxWaiting) {
      const oldest = this.waiting.values().next().value!;
      this.waiting.delete(oldest);
      this.parts.delete(oldest);
      this.stats.waitingDropped++;
    }
  }

  /** The session, made the most recently active; the least recently active beyond maxSessions is forgotten. */
  private session(sessionId: string): SessionState {
    let session = this.sessions.get(sessionId);
    if (session) this.sessions.delete(sessionId);
    else session = { streams: new Map() };
    this.sessions.set(sessionId, session);
    while (this.sessions.size > this.maxSessions) this.evict();
    return session;
  }
}
