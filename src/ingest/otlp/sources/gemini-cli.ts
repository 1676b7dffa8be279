// Gemini CLI (0.61.x). Each model call is logged twice, with one
// `event.timestamp`: `gemini_cli.api_response` (usage, role, prompt_id, no
// request or response id) and `gen_ai.client.inference.operation.details`
// (the system instructions, no role or prompt_id). The first gives the usage
// under a derived request id; the second, matched by session and timestamp,
// gives that request its snapshot. `input_token_count` INCLUDES the cache
// read; Gemini reports no cache write.
//
// `gemini_cli.chat_compression` (tokens_before, tokens_after, no model) says
// the session's history was summarised: it becomes a compaction marker. The
// summarisation calls themselves (role utility_compressor) keep their own
// stream: they are also made when the compression then fails.
import type { CacheEvent } from '../../../core/types.js';
import type { Attributes, LogRecord, Origin } from '../records.js';
import type { KnownCall, MappingContext } from './context.js';
import { count, eventName, eventTime, firstText, millis, requireSession, serviceName, text } from './attributes.js';
import { compactionMarker, noteSessionModel } from './compaction.js';
import { derivedRequestId, inclusive, snapshotEvent, usageEvent, type Call } from './events.js';
import { GENAI_DETAILS_EVENT, genaiPrefix } from './genai.js';
import type { Prefix } from './prefix.js';
import { ignored, MappingError, none, type Outcome, type Source } from './source.js';

const SERVICE = 'gemini-cli';
const PREFIX = 'gemini_cli.';
const PROVIDER = 'gemini';
const CHAT_COMPRESSION = 'gemini_cli.chat_compression';

function fromGeminiCli(origin: Origin): boolean {
  return origin.scope.name === SERVICE || serviceName(origin) === SERVICE;
}

/**
 * role → stream: `main` is the main thread; a subagent run is named by its id
 * in prompt_id (`<agent id>#<round>`); each utility call (`utility_router`
 * before every turn, the compressor…) is its own stream, named by its role.
 */
export function geminiAgent(role: string | undefined, promptId: string | undefined): string {
  if (role === undefined || role === 'main') return 'main';
  if (role !== 'subagent') return role;
  return (promptId === undefined ? undefined : /^(.+)#\d+$/.exec(promptId)?.[1]) ?? role;
}

/** What both records of one call share. */
function joinKey(sessionId: string, record: LogRecord): string {
  return `${sessionId}\u0000${text(record.attributes, 'event.timestamp') ?? record.timeMs}`;
}

function snapshotOf(call: KnownCall, prefix: Prefix, model: string | undefined): CacheEvent[] {
  const chosen = call.model ?? model;
  if (chosen === undefined) return [];
  const { requestId, sessionId, agentId, provider } = call;
  return [snapshotEvent({ requestId, sessionId, agentId, provider, ts: call.startMs }, { ...prefix, model: chosen })];
}

function apiResponse(record: LogRecord, context: MappingContext): Outcome {
  const a = record.attributes;
  const total = count(a, 'input_token_count');
  if (total === undefined) throw new MappingError('input_token_count: required');
  const sessionId = requireSession(record, a);
  const role = text(a, 'role');
  const promptId = text(a, 'prompt_id');
  const model = text(a, 'model');
  const endMs = eventTime(record);
  const call: Call = {
    // No id is sent: these attributes identify the call, and are the same when the record is sent again.
    requestId: derivedRequestId('gemini_cli', [sessionId, role, promptId, a['event.timestamp'] ?? record.timeMs, model]),
    sessionId,
    agentId: geminiAgent(role, promptId),
    provider: PROVIDER,
    model,
    startMs: endMs - (millis(a, 'duration_ms') ?? 0),
    endMs,
  };
  // Thinking is billed as output but not counted in output_token_count
  // (candidatesTokenCount). An absent read is 0: Gemini omits zero counts.
  const tokens = inclusive(total, {
    read: count(a, 'cached_content_token_count') ?? 0,
    output: (count(a, 'output_token_count') ?? 0) + (count(a, 'thoughts_token_count') ?? 0),
  });
  noteSessionModel(context, sessionId, call.agentId, model);
  // A usage event, not a turn: the details record brings this call's snapshot.
  const events = [usageEvent(call, tokens)];
  const key = joinKey(sessionId, record);
  const waiting = context.geminiPrefixes.take(key);
  if (waiting === undefined) context.geminiCalls.set(key, call);
  else events.push(...snapshotOf(call, waiting.prefix, waiting.model));
  return { events };
}

function details(record: LogRecord, context: MappingContext): Outcome {
  const a: Attributes = record.attributes;
  // The request-side and error-side details records are not a completed call.
  if (a['gen_ai.response.id'] === undefined && a['gen_ai.usage.input_tokens'] === undefined) return ignored('unused_event');
  const prefix = genaiPrefix(a);
  if (prefix === undefined) return ignored('no_prefix');
  const key = joinKey(requireSession(record, a), record);
  const model = firstText(a, ['gen_ai.request.model', 'gen_ai.response.model']);
  const call = context.geminiCalls.take(key);
  if (call !== undefined) return { events: snapshotOf(call, prefix, model) };
  context.geminiPrefixes.set(key, { prefix, model });
  return none;
}

export const geminiCli: Source = {
  name: 'gemini-cli',
  log(record, context) {
    const name = eventName(record);
    if (name === 'gemini_cli.api_response') return apiResponse(record, context);
    if (name === CHAT_COMPRESSION) {
      const sessionId = requireSession(record, record.attributes);
      return compactionMarker(record, context, { source: 'gemini_cli', name, sessionId, provider: PROVIDER });
    }
    if (name.startsWith(PREFIX)) return ignored('unused_event');
    if (name === GENAI_DETAILS_EVENT && fromGeminiCli(record)) return details(record, context);
    return undefined;
  },
  // Gemini CLI's spans repeat what its log records already count.
  span(span) {
    return fromGeminiCli(span) ? ignored('covered_by_logs') : undefined;
  },
};
