// A harness's record that it compacted a session's history (Qwen Code's and
// Gemini CLI's `chat_compression`) → a compaction marker: a snapshot in the
// session's compact stream. Any turn there makes the session's next main
// turn an expected miss (SPEC §4.9, §4.12), so the rewritten history is not
// reported as a break.
//
// Both harnesses log the record after the summarisation, also when it failed
// and the history was kept: then tokens_after is not below tokens_before
// (equal for an empty summary, above for an inflated one). Such a record
// announces nothing, and a marker would hide a real break after it.
import { COMPACT_AGENT, MAIN_AGENT } from '../../../core/stream.js';
import type { LogRecord } from '../records.js';
import { count, eventTime, text } from './attributes.js';
import type { MappingContext } from './context.js';
import { derivedRequestId, snapshotEvent } from './events.js';
import { ignored, type Outcome } from './source.js';

/** The model of a marker whose record names none, and whose session's model is not known. */
export const UNKNOWN_MODEL = 'unknown';

export interface Compaction {
  /** The source's prefix of derived request ids (`qwen-code`, `gemini_cli`). */
  source: string;
  /** The record's full event name. */
  name: string;
  sessionId: string;
  provider?: string | undefined;
}

/** Remembers the model of a session's latest main-stream call, to label its compaction markers. */
export function noteSessionModel(context: MappingContext, sessionId: string, agentId: string, model: string | undefined): void {
  if (agentId === MAIN_AGENT && model !== undefined) context.sessionModels.set(sessionId, model);
}

export function compactionMarker(record: LogRecord, context: MappingContext, compaction: Compaction): Outcome {
  const a = record.attributes;
  const before = count(a, 'tokens_before');
  const after = count(a, 'tokens_after');
  if (before !== undefined && after !== undefined && after >= before) return ignored('compression_not_applied');
  const { source, name, sessionId, provider } = compaction;
  // The record names no request: these identify it, the same when it is sent again.
  const requestId = derivedRequestId(source, [sessionId, name, a['event.timestamp'] ?? record.timeMs]);
  // The model only labels the marker: a turn without usage is never judged.
  const model = text(a, 'model') ?? context.sessionModels.peek(sessionId) ?? UNKNOWN_MODEL;
  const place = { requestId, sessionId, agentId: COMPACT_AGENT, ts: eventTime(record), ...(provider === undefined ? {} : { provider }) };
  return { events: [snapshotEvent(place, { model })] };
}
