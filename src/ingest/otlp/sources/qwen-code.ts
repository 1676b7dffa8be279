// Qwen Code (0.24.x). Each model call is a `qwen-code.api_response` log
// record and, when traces are exported, a `qwen-code.llm_request` span. Both
// name the provider's response id, so both map to the same requestId and the
// second to arrive is a duplicate, never a second turn.
//
// Token counts are Gemini-shaped inside Qwen Code whatever the provider:
// `input_token_count` is promptTokenCount, which INCLUDES the cache read
// (and, for Anthropic, the cache write); `cached_content_token_count` is the
// read, and the log record has no write count.
//
// `qwen-code.chat_compression` (tokens_before, tokens_after, no model) says
// the session's history was summarised: it becomes a compaction marker.
import type { LogRecord, Span } from '../records.js';
import { count, eventName, eventTime, millis, requireSession, serviceName, text } from './attributes.js';
import { compactionMarker, noteSessionModel } from './compaction.js';
import type { MappingContext } from './context.js';
import { callEvent, derivedRequestId, inclusive, providerLabel, type Call } from './events.js';
import { ignored, MappingError, type Outcome, type Source } from './source.js';

const PREFIX = 'qwen-code.';
const CHAT_COMPRESSION = 'qwen-code.chat_compression';

/**
 * A subagent round's prompt_id is `<session>#<subagent id>#<round>`, where the
 * subagent id (`<name>-<hex>`) names one subagent run: one conversation, one
 * cache lineage. The main thread's is `<session>########<n>`.
 */
const SUBAGENT_PROMPT = /^[^#]+#([^#]+)#\d+$/;

/** The stream of a call: the subagent run from prompt_id, else subagent_name (empty on the main thread), else main. */
export function qwenAgent(promptId: string | undefined, subagentName: string | undefined): string {
  const run = promptId === undefined ? undefined : SUBAGENT_PROMPT.exec(promptId)?.[1];
  return run ?? subagentName ?? 'main';
}

/** auth_type → provider, as Qwen Code resolves it when nothing more specific is known. */
const PROVIDER_BY_AUTH: Readonly<Record<string, string>> = {
  'qwen-oauth': 'dashscope',
  anthropic: 'anthropic',
  gemini: 'gemini',
  'vertex-ai': 'gemini',
  openai: 'openai',
};

function apiResponse(record: LogRecord, context: MappingContext): Outcome {
  const a = record.attributes;
  const total = count(a, 'input_token_count');
  if (total === undefined) throw new MappingError('input_token_count: required');
  const sessionId = requireSession(record, a);
  const promptId = text(a, 'prompt_id');
  const model = text(a, 'model');
  const endMs = eventTime(record);
  const call: Call = {
    requestId: text(a, 'response_id') ?? derivedRequestId('qwen-code', [sessionId, promptId, a['event.timestamp'], model]),
    sessionId,
    agentId: qwenAgent(promptId, text(a, 'subagent_name')),
    provider: PROVIDER_BY_AUTH[text(a, 'auth_type') ?? ''] ?? 'openai',
    model,
    startMs: endMs - (millis(a, 'duration_ms') ?? 0),
    endMs,
    ttftMs: millis(a, 'ttft_ms'),
  };
  // output_token_count already includes reasoning tokens for OpenAI-compatible
  // providers, so thoughts_token_count is not added.
  const tokens = inclusive(total, { read: count(a, 'cached_content_token_count'), output: count(a, 'output_token_count') });
  noteSessionModel(context, sessionId, call.agentId, model);
  return { events: [callEvent(call, {}, tokens)] };
}

function llmRequest(span: Span, context: MappingContext): Outcome {
  const a = span.attributes;
  const total = count(a, 'gen_ai.usage.input_tokens');
  // Failed and cancelled calls end their span without usage.
  if (total === undefined) return ignored('no_usage');
  const requestId = text(a, 'gen_ai.response.id');
  // Without it the span cannot be matched to its api_response record, which counts the same call.
  if (requestId === undefined) return ignored('no_request_id');
  const call: Call = {
    requestId,
    sessionId: requireSession(span, a),
    agentId: qwenAgent(text(a, 'qwen-code.prompt_id'), text(a, 'subagent_name')),
    provider: providerLabel(text(a, 'gen_ai.provider.name') ?? 'openai'),
    model: text(a, 'gen_ai.request.model') ?? text(a, 'gen_ai.response.model'),
    startMs: span.startMs,
    endMs: span.endMs,
  };
  const tokens = inclusive(total, {
    // Qwen Code's log record reports an unreported read as 0; the span must agree, whichever arrives first.
    read: count(a, 'gen_ai.usage.cache_read.input_tokens') ?? 0,
    write: count(a, 'gen_ai.usage.cache_creation.input_tokens') ?? count(a, 'gen_ai.usage.cache_write.input_tokens'),
    output: count(a, 'gen_ai.usage.output_tokens'),
  });
  noteSessionModel(context, call.sessionId, call.agentId, call.model);
  return { events: [callEvent(call, {}, tokens)] };
}

export const qwenCode: Source = {
  name: 'qwen-code',
  log(record, context) {
    const name = eventName(record);
    if (!name.startsWith(PREFIX)) return undefined;
    if (name === 'qwen-code.api_response') return apiResponse(record, context);
    if (name === CHAT_COMPRESSION) {
      return compactionMarker(record, context, { source: 'qwen-code', name, sessionId: requireSession(record, record.attributes) });
    }
    return ignored('unused_event');
  },
  span(span, context) {
    if (!span.name.startsWith(PREFIX) && serviceName(span) !== 'qwen-code') return undefined;
    return span.name === 'qwen-code.llm_request' ? llmRequest(span, context) : ignored('no_usage');
  },
};
