// Gemini CLI (0.61.x). Each model call is four records:
// - the `llm_call` span (exported by default) carries the request's system
//   instructions (`gen_ai.system_instructions`) and tool declarations
//   (`gen_ai.tool.definitions`), set when the span starts, whatever the
//   content settings;
// - `gemini_cli.api_request`, logged inside that span (so it carries the
//   span's ids), carries `request_text`, the JSON of the request's contents
//   (prompt logging is on by default);
// - `gemini_cli.api_response` carries the usage, role and prompt_id, but no
//   request or response id, and is not always logged inside the span (a
//   streamed response is logged where the stream is read);
// - a `gen_ai.client.inference.operation.details` record, logged right after
//   it with the same session and `event.timestamp`, names the Gemini API's
//   `responseId` of the answer (`gen_ai.response.id`).
// An api_response whose details record is in the same export (one log
// exporter batches both, one right after the other) is named by that
// response id, the one the proxy gives the same call (proxy/gemini.ts), so
// OTLP and the proxy from the same Gemini CLI make one turn. Otherwise (no
// details record, none with an id, or an export that ends between the two)
// the call keeps an id derived from its attributes: nothing waits for the
// other record, so nothing of a call is held back or kept in memory for it.
// The response pairs with the request record of its stream (session, role,
// prompt_id) that started when it did (calls.ts), and through it with the
// span, whichever node receives it (a join through the store on the span's
// ids): together they give the call's full snapshot — per-tool schema
// hashes, the system hash, a hash per message; the text is hashed and
// dropped. `input_token_count` INCLUDES the cache read; Gemini reports no
// cache write. The details records' system instructions (another shape, cut
// to a length limit) are not used, so that one call's system hash is never
// compared with another's taken from a different shape.
//
// `gemini_cli.chat_compression` (tokens_before, tokens_after, no model) says
// the session's history was summarised: it becomes a compaction marker. The
// summarisation calls themselves (role utility_compressor) keep their own
// stream: they are also made when the compression then fails.
import type { LogRecord, Origin, Span } from '../records.js';
import type { MappingContext } from './context.js';
import { count, eventName, eventTime, millis, requireSession, serviceName, sessionIdOf, text } from './attributes.js';
import { requestRecord, responseRecord, spanHalf, spanJoinKey, type SpanJoin } from './calls.js';
import { compactionMarker, noteSessionModel } from './compaction.js';
import { derivedRequestId, inclusive, usageEvent, type Call } from './events.js';
import { GENAI_DETAILS_EVENT, genaiPrefix, traceRequestId } from './genai.js';
import { messageHashesOf } from './prefix.js';
import { ignored, MappingError, type Outcome, type Source } from './source.js';

const SERVICE = 'gemini-cli';
const PREFIX = 'gemini_cli.';
const PROVIDER = 'gemini';
const CHAT_COMPRESSION = 'gemini_cli.chat_compression';
const LLM_CALL = 'llm_call';

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

/** A call joins the `llm_call` span its request record was logged in. */
const spanJoin: SpanJoin = (_, request) => (request?.spanKey === undefined ? undefined : spanJoinKey('gemini_cli', request.spanKey));

/** The stream both records of a call name. */
function streamKey(sessionId: string, a: LogRecord['attributes']): string {
  return ['gemini_cli', sessionId, text(a, 'role') ?? '', text(a, 'prompt_id') ?? ''].join('\u0000');
}

function apiRequest(record: LogRecord, context: MappingContext): Outcome {
  const a = record.attributes;
  const sessionId = requireSession(record, a);
  const at = eventTime(record);
  const spanKey = traceRequestId(record.traceId, record.spanId);
  const half = {
    id: derivedRequestId('gemini_cli', [sessionId, text(a, 'role'), text(a, 'prompt_id'), a['event.timestamp'] ?? record.timeMs, spanKey]),
    messageHashes: messageHashesOf(a['request_text']),
    spanKey,
  };
  return requestRecord(context, streamKey(sessionId, a), at, half, spanJoin);
}

/** What pairs an api_response with its details record: undefined without a timestamp. */
function responseKey(sessionId: string, a: LogRecord['attributes']): string | undefined {
  const at = a['event.timestamp'];
  return typeof at === 'string' && at !== '' ? JSON.stringify(['gemini_cli', sessionId, at]) : undefined;
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
    // Without a response id, these attributes identify the call, and are the same when the record is sent again.
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
  const key = responseKey(sessionId, a);
  const responseId = key === undefined ? undefined : context.exportResponseIds.get(key);
  const named = responseId === undefined || responseId === '' ? call : { ...call, requestId: responseId };
  // A usage event, not a turn: the request record and the span bring this call's snapshot.
  const joined = responseRecord(context, streamKey(sessionId, a), named, spanJoin);
  return { events: [usageEvent(named, tokens), ...joined.events], halves: joined.halves };
}

/** The response ids the export's details records name: a response's (it counts tokens), by the key of the api_response logged with it. */
function indexDetails(records: readonly LogRecord[], context: MappingContext): void {
  context.exportResponseIds.clear();
  for (const record of records) {
    const a = record.attributes;
    if (eventName(record) !== GENAI_DETAILS_EVENT || !fromGeminiCli(record) || count(a, 'gen_ai.usage.input_tokens') === undefined) continue;
    const sessionId = sessionIdOf(record, a);
    const key = sessionId === undefined ? undefined : responseKey(sessionId, a);
    if (key !== undefined) context.exportResponseIds.set(key, text(a, 'gen_ai.response.id') ?? '');
  }
}

/** The `llm_call` span: the prefix of the call whose request record was logged inside it; its counts repeat the logs'. */
function llmCall(span: Span, context: MappingContext): Outcome {
  const spanKey = traceRequestId(span.traceId, span.spanId);
  const prefix = genaiPrefix(span.attributes);
  if (spanKey === undefined || prefix === undefined) return ignored('covered_by_logs');
  return { events: [], halves: [spanHalf(context, spanJoinKey('gemini_cli', spanKey), prefix)] };
}

export const geminiCli: Source = {
  name: 'gemini-cli',
  beforeLogs: indexDetails,
  log(record, context) {
    const name = eventName(record);
    if (name === 'gemini_cli.api_request') return apiRequest(record, context);
    if (name === 'gemini_cli.api_response') return apiResponse(record, context);
    if (name === CHAT_COMPRESSION) {
      const sessionId = requireSession(record, record.attributes);
      return compactionMarker(record, context, { source: 'gemini_cli', name, sessionId, provider: PROVIDER });
    }
    if (name.startsWith(PREFIX)) return ignored('unused_event');
    // A response's details record was read with its export (indexDetails); a request's or a failed call's names no response.
    if (name === GENAI_DETAILS_EVENT && fromGeminiCli(record)) return count(record.attributes, 'gen_ai.usage.input_tokens') === undefined ? ignored('unused_event') : { events: [] };
    return undefined;
  },
  // Gemini CLI's spans repeat what its log records count; `llm_call` also carries the call's system and tools.
  span(span, context) {
    if (!fromGeminiCli(span)) return undefined;
    return span.name === LLM_CALL ? llmCall(span, context) : ignored('covered_by_logs');
  },
};
