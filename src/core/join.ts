// Joins snapshot and usage events into turns on requestId (SPEC §1, §4.8).
// Each part is kept once. When two sources describe the same part differently
// (a harness's log record and its span), the more informative one wins, by a
// total order that does not depend on arrival: any order of the same events
// gives the same turn. An identical repeat is a duplicate.
import { toPrefix } from './prefix.js';
import { ORIGIN_KEYS, type CacheEvent, type EpochMs, type Prefix, type OriginKey, type Turn, type TurnOrigin, type Usage } from './types.js';

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
  ttftMs?: number;
  sessionId?: string;
  agentId?: string;
  provider?: string;
  model?: string;
  usage: Usage;
  diagnostics?: unknown;
}

export interface TurnParts {
  requestId: string;
  /** Per field, the smallest value a snapshot named, else the smallest a usage named. */
  origin?: TurnOrigin;
  /** The fields of `origin` a snapshot named: a usage's value gives way to a snapshot's. */
  snapshotNamed?: readonly OriginKey[];
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
  const part: UsagePart = { usage: event.usage };
  if (event.provider !== undefined) part.provider = event.provider;
  const ts = event.type === 'turn' ? event.endTs : event.ts;
  if (ts !== undefined) part.ts = ts;
  if (event.ttftMs !== undefined) part.ttftMs = event.ttftMs;
  if (event.sessionId !== undefined) part.sessionId = event.sessionId;
  if (event.agentId !== undefined) part.agentId = event.agentId;
  if (event.model !== undefined) part.model = event.model;
  if (event.diagnostics !== undefined) part.diagnostics = event.diagnostics;
  return part;
}

/** Orders two ranks: a tuple of counts (more is better), then a key string. */
function compareRanks(a: [number[], string], b: [number[], string]): number {
  for (let i = 0; i < a[0].length; i++) if (a[0][i] !== b[0][i]) return a[0][i]! - b[0][i]!;
  return a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0;
}

const defined = (...values: unknown[]) => values.filter((v) => v !== undefined).length;

/**
 * What a snapshot part tells, counted, then its content. Message hashes enter
 * by count only: the store keeps them in another form, and both must rank alike.
 */
function snapshotRank(part: SnapshotPart): [number[], string] {
  const p = part.prefix;
  const told = defined(p.systemHash, p.tools, p.cacheControlHash, p.messageHashes, p.markers, p.params, part.provider, part.expectMiss, p.messageBlockCounts);
  const key = [part.ts, part.sessionId, part.agentId, part.model, part.provider, part.expectMiss, p.systemHash,
    p.systemBlockHashes?.join(','), p.toolsHash, p.cacheControlHash, p.ttlMs, p.messageHashes?.length, p.markers?.join(' '),
    p.params && JSON.stringify(p.params), p.partial, ...(p.messageBlockCounts ? [p.messageBlockCounts.join(',')] : []),
    ...(p.prefixChars ? [`chars ${p.prefixChars.join(',')}`] : [])];
  return [[told], JSON.stringify(key)];
}

/**
 * A usage that reports cache fields, a cache write among them (it decides
 * the caching mode, SPEC §4.12), and more of them, tells more. Session and
 * agent are placement, not content.
 */
function usageRank(part: UsagePart): [number[], string] {
  const u = part.usage;
  const nonZero = [u.read, u.write, u.write1h, u.output].filter((n) => n > 0).length;
  const key = [u.uncached, u.read, u.write, u.write1h, u.output, u.writeReported, part.ts, part.ttftMs, part.model, part.provider, JSON.stringify(part.diagnostics)];
  return [[u.cacheReported ? 1 : 0, u.writeReported ? 1 : 0, nonZero, defined(part.diagnostics, part.ttftMs, part.provider)], JSON.stringify(key)];
}

/**
 * The origin after an event, per field: a snapshot's value over a usage's,
 * else the smaller, so that any order of the same events names the same.
 */
function mergeOrigin(parts: TurnParts, event: CacheEvent): { origin: TurnOrigin | undefined; snapshotNamed: readonly OriginKey[] } {
  let { origin, snapshotNamed = [] } = parts;
  const fromSnapshot = event.type !== 'usage';
  for (const key of ORIGIN_KEYS) {
    const value = event[key];
    const current = origin?.[key];
    if (value === undefined || current === value) continue;
    const currentFromSnapshot = snapshotNamed.includes(key);
    if (current !== undefined && (currentFromSnapshot !== fromSnapshot ? currentFromSnapshot : current < value)) continue;
    origin = { ...origin, [key]: value };
    if (fromSnapshot && !currentFromSnapshot) snapshotNamed = [...snapshotNamed, key];
  }
  return { origin, snapshotNamed };
}

export function mergeEvent(existing: TurnParts | undefined, event: CacheEvent): MergeResult {
  const parts: TurnParts = existing ? { ...existing } : { requestId: event.requestId };
  let added = false;
  // Where the call came from is kept, but is no part: an event that only adds it is still a duplicate.
  const { origin, snapshotNamed } = mergeOrigin(parts, event);
  if (origin !== undefined) parts.origin = origin;
  if (snapshotNamed.length > 0) parts.snapshotNamed = snapshotNamed;
  if (event.type !== 'usage') {
    const candidate = snapshotPart(event);
    if (!parts.snapshot || compareRanks(snapshotRank(candidate), snapshotRank(parts.snapshot)) > 0) {
      parts.snapshot = candidate;
      added = true;
    }
  }
  if (event.type !== 'snapshot') {
    const candidate = usagePart(event);
    if (!parts.usage || compareRanks(usageRank(candidate), usageRank(parts.usage)) > 0) {
      parts.usage = candidate;
      added = true;
    }
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
  if (usage?.ttftMs !== undefined) turn.ttftMs = usage.ttftMs;
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
  if (parts.origin) Object.assign(turn, parts.origin);
  return turn;
}
