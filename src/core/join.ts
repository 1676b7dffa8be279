// Joins snapshot and usage events into turns on requestId (SPEC §1, §4.8).
// Each part is kept once: the first snapshot and the first usage of a request
// win, and a later copy of either is a duplicate.
import { toPrefix } from './prefix.js';
import type { CacheEvent, EpochMs, Prefix, Turn, Usage } from './types.js';

export interface SnapshotPart {
  ts: EpochMs;
  sessionId: string;
  agentId: string;
  provider?: string;
  model: string;
  prefix: Prefix;
  expectMiss?: string;
}

export interface UsagePart {
  ts?: EpochMs;
  sessionId?: string;
  agentId?: string;
  provider: string;
  model?: string;
  usage: Usage;
  diagnostics?: unknown;
}

export interface TurnParts {
  requestId: string;
  snapshot?: SnapshotPart;
  usage?: UsagePart;
}

export interface MergeResult {
  parts: TurnParts;
  /** Nothing new: every part the event carried was already known. */
  duplicate: boolean;
}

function snapshotPart(event: Extract<CacheEvent, { type: 'snapshot' | 'turn' }>): SnapshotPart {
  const part: SnapshotPart = {
    ts: event.ts,
    sessionId: event.sessionId,
    agentId: event.agentId,
    model: event.model,
    prefix: toPrefix(event),
  };
  if (event.provider !== undefined) part.provider = event.provider;
  if (event.expectMiss !== undefined) part.expectMiss = event.expectMiss;
  return part;
}

function usagePart(event: CacheEvent & { type: 'usage' | 'turn' }): UsagePart {
  const part: UsagePart = { provider: event.provider, usage: event.usage };
  const ts = event.type === 'turn' ? event.endTs : event.ts;
  if (ts !== undefined) part.ts = ts;
  if (event.sessionId !== undefined) part.sessionId = event.sessionId;
  if (event.agentId !== undefined) part.agentId = event.agentId;
  if (event.model !== undefined) part.model = event.model;
  if (event.diagnostics !== undefined) part.diagnostics = event.diagnostics;
  return part;
}

export function mergeEvent(existing: TurnParts | undefined, event: CacheEvent): MergeResult {
  const parts: TurnParts = existing ? { ...existing } : { requestId: event.requestId };
  let added = false;
  if (event.type !== 'usage' && !parts.snapshot) {
    parts.snapshot = snapshotPart(event);
    added = true;
  }
  if (event.type !== 'snapshot' && !parts.usage) {
    parts.usage = usagePart(event);
    added = true;
  }
  return { parts, duplicate: !added };
}

/**
 * The turn the parts describe, or undefined while its session or time is
 * unknown (a usage that arrived before its snapshot and named neither).
 */
export function toTurn(parts: TurnParts): Turn | undefined {
  const { snapshot, usage } = parts;
  const sessionId = snapshot?.sessionId ?? usage?.sessionId;
  const ts = snapshot?.ts ?? usage?.ts;
  if (sessionId === undefined || ts === undefined) return undefined;
  const turn: Turn = {
    requestId: parts.requestId,
    sessionId,
    agentId: snapshot?.agentId ?? usage?.agentId ?? 'main',
    ts,
  };
  if (usage?.ts !== undefined) turn.endTs = usage.ts;
  const provider = snapshot?.provider ?? usage?.provider;
  if (provider !== undefined) turn.provider = provider;
  const model = snapshot?.model ?? usage?.model;
  if (model !== undefined) turn.model = model;
  if (snapshot) {
    turn.prefix = snapshot.prefix;
    if (snapshot.expectMiss !== undefined) turn.expectMiss = snapshot.expectMiss;
  }
  if (usage) {
    turn.usage = usage.usage;
    if (usage.diagnostics !== undefined) turn.diagnostics = usage.diagnostics;
  }
  return turn;
}
