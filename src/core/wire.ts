// A domain event as a client POSTs it to /v1/events (SPEC §2): the inverse of
// the server's reading (ingest/http/events.ts). Usage goes as the normalised
// token fields, each present exactly when the provider reported it, so that
// the server reads back the same usage; times go as epoch milliseconds.
import type { CacheEvent, Usage } from './types.js';

/** One event of SPEC §2, as JSON. */
export type WireEvent = Record<string, unknown> & { type: 'snapshot' | 'usage' | 'turn'; requestId: string };

/**
 * SPEC §2's normalised usage fields: a read (and write) count only when the
 * usage reported one, so that "unreported" and automatic caching survive the
 * trip (SPEC §3, §4.12).
 */
export function wireUsage(usage: Usage): Record<string, number> {
  const fields: Record<string, number> = { uncachedInputTokens: usage.uncached, outputTokens: usage.output };
  if (!usage.cacheReported) return fields;
  fields.cacheReadInputTokens = usage.read;
  if (usage.writeReported) {
    fields.cacheWriteInputTokens = usage.write;
    fields.cacheWrite1hInputTokens = usage.write1h;
  }
  return fields;
}

/** A domain event as SPEC §2 JSON, which the server reads back to the same event. */
export function toWireEvent(event: CacheEvent): WireEvent {
  if (event.type === 'snapshot') return { ...event };
  const { usage, ...rest } = event;
  return { ...rest, ...wireUsage(usage) };
}
