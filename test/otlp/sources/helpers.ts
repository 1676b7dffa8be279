// Loads the OTLP source fixtures (decoded Telemetry, as the transports hand it
// over) and runs them through the mapping and a real store.
import { readFileSync } from 'node:fs';
import { DEFAULT_DETECTION } from '../../../src/core/options.js';
import { evaluateEvents } from '../../../src/core/stream.js';
import type { CacheEvent, Usage } from '../../../src/core/types.js';
import type { Telemetry } from '../../../src/ingest/otlp/records.js';
import { createMappingContext, mapTelemetry, type Mapped, type MappingContext } from '../../../src/ingest/otlp/sources/index.js';
import type { SqliteStore } from '../../../src/store/sqlite/store.js';
import type { TurnView } from '../../../src/store/store.js';
import { freshStore } from '../../helpers.js';

export function fixture(path: string): Telemetry {
  const raw = JSON.parse(readFileSync(new URL(`../../fixtures/otlp/${path}`, import.meta.url), 'utf8')) as Telemetry;
  return { logs: raw.logs, spans: raw.spans, points: raw.points };
}

/** The raw text of a fixture, to look for content in what cachebreak produced. */
export function fixtureText(path: string): string {
  return readFileSync(new URL(`../../fixtures/otlp/${path}`, import.meta.url), 'utf8');
}

export function only(part: Partial<Telemetry>): Telemetry {
  return { logs: [], spans: [], points: [], ...part };
}

/** Maps telemetry in one go, with a fresh context unless one is given. */
export function mapped(telemetry: Telemetry, context: MappingContext = createMappingContext()): Mapped {
  return mapTelemetry(telemetry, context);
}

/**
 * Maps telemetry as an outfile gives it: each log record an export of its
 * own (so no record is read together with another), then the spans and points.
 */
export function mappedPerRecord(telemetry: Telemetry): Mapped {
  const context = createMappingContext();
  const parts = [...telemetry.logs.map((log) => only({ logs: [log] })), only({ spans: telemetry.spans, points: telemetry.points })].map((t) => mapped(t, context));
  const ignored: Record<string, number> = {};
  for (const part of parts) for (const [reason, n] of Object.entries(part.ignored)) ignored[reason] = (ignored[reason] ?? 0) + n;
  return {
    events: parts.flatMap((p) => p.events),
    origins: parts.flatMap((p) => p.origins),
    tokenPoints: parts.flatMap((p) => p.tokenPoints),
    halves: parts.flatMap((p) => p.halves),
    ignored,
    rejected: parts.flatMap((p) => p.rejected),
  };
}

export interface Stored {
  store: SqliteStore;
  counts: { accepted: number; duplicates: number };
}

/** Writes what several mappings produced, in order, each as one request. */
export async function store(...results: Mapped[]): Promise<Stored> {
  const s = freshStore();
  let accepted = 0;
  let duplicates = 0;
  for (const result of results) {
    const written = await s.write([{ project: 'default', events: result.events, tokenPoints: result.tokenPoints }]);
    accepted += written.counts[0]!.accepted;
    duplicates += written.counts[0]!.duplicates;
  }
  return { store: s, counts: { accepted, duplicates } };
}

export async function turns(s: SqliteStore, sessionId: string): Promise<TurnView[]> {
  const found = await s.sessionTurns('default', sessionId);
  if (found === null) throw new Error(`no session ${sessionId}`);
  return found;
}

/** requestId → state, in stored order. */
export function states(views: readonly TurnView[]): Record<string, string | null> {
  return Object.fromEntries(views.map((v) => [v.requestId, v.state]));
}

export function usageOf(events: readonly CacheEvent[], requestId: string): Usage {
  const event = events.find((e) => e.requestId === requestId && e.type !== 'snapshot');
  if (event === undefined || event.type === 'snapshot') throw new Error(`no usage for ${requestId}`);
  return event.usage;
}

export function totalInput(usage: Usage): number {
  return usage.uncached + usage.read + usage.write;
}

/** requestId → state, as the core's reference evaluation judges the events (every stream, compactions included), no store. */
export function judged(events: readonly CacheEvent[]): Record<string, string> {
  return Object.fromEntries(evaluateEvents(events, DEFAULT_DETECTION).map((e) => [e.requestId, e.state]));
}
