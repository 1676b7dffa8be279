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
// The span also reports the cache write (`gen_ai.usage.cache_creation.input_tokens`)
// when the provider does.
//
// Neither record carries the system prompt or the tools. What describes the
// prefix:
// - `qwen-code.api_request` carries `request_text`, the JSON of the request's
//   messages (prompt logging is on by default): it pairs with the
//   api_response of its stream that started when it did (calls.ts) and
//   gives the call a hash per message, so a rewritten history is named;
// - the llm_request span's `qwen-code.context.usage` estimates the prompt's
//   tokens per part (system prompt, memory files such as QWEN.md, built-in
//   tools, MCP tools, skills, messages). The parts before the messages
//   become hashes of their counts: a system hash (system prompt and memory
//   files) and two tool entries, `(built-in tools)` and `(MCP tools)`, so
//   that a QWEN.md edit is `system_changed` and an MCP tool added
//   `tools_schema_changed`. A change that keeps every estimated count the
//   same is not seen. When the estimates exceed the provider's count, Qwen
//   Code scales them down to fit (messages then count 0): such counts say
//   nothing stable and are not used.
//
// `qwen-code.chat_compression` (tokens_before, tokens_after, no model) says
// the session's history was summarised: it becomes a compaction marker.
import { hashValue } from '../../../core/hash.js';
import type { Attributes, LogRecord, Span } from '../records.js';
import { count, eventName, eventTime, millis, requireSession, serviceName, text } from './attributes.js';
import { requestRecord, responseRecord, spanHalf, spanJoinKey, type SpanJoin } from './calls.js';
import { compactionMarker, noteSessionModel } from './compaction.js';
import type { MappingContext } from './context.js';
import { callEvent, derivedRequestId, inclusive, providerLabel, type Call } from './events.js';
import { messageHashesOf, type Prefix } from './prefix.js';
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

/** The provider of an auth_type; OpenAI's compatible API for any other. */
function providerOf(authType: string | undefined): string {
  return authType !== undefined && Object.hasOwn(PROVIDER_BY_AUTH, authType) ? PROVIDER_BY_AUTH[authType]! : 'openai';
}

/** A call joins its llm_request span on the response id both name. */
const spanJoin: SpanJoin = (call) => spanJoinKey('qwen-code', call.requestId);

/** The stream both records of a call name. */
function streamKey(sessionId: string, promptId: string | undefined, agentId: string): string {
  return ['qwen-code', sessionId, agentId, promptId ?? ''].join('\u0000');
}

function apiRequest(record: LogRecord, context: MappingContext): Outcome {
  const a = record.attributes;
  const sessionId = requireSession(record, a);
  const promptId = text(a, 'prompt_id');
  const half = {
    id: derivedRequestId('qwen-code', [sessionId, promptId, a['event.timestamp'] ?? record.timeMs]),
    messageHashes: messageHashesOf(a['request_text']),
  };
  // Without messages the record adds nothing to its call.
  if (half.messageHashes === undefined) return ignored('no_prefix');
  const key = streamKey(sessionId, promptId, qwenAgent(promptId, text(a, 'subagent_name')));
  return requestRecord(context, key, eventTime(record), half, spanJoin);
}

const CONTEXT_USAGE = 'qwen-code.context.usage';
const PARTS = ['system_prompt_tokens', 'memory_files_tokens', 'builtin_tools_tokens', 'mcp_tools_tokens', 'messages_tokens'] as const;

/** The prefix parts' token estimates as hashes; undefined when absent or not comparable (see the top of this file). */
function contextPrefix(a: Attributes): Prefix | undefined {
  const raw = a[CONTEXT_USAGE];
  if (typeof raw !== 'string') return undefined;
  let breakdown: unknown;
  try {
    breakdown = (JSON.parse(raw) as { breakdown?: unknown }).breakdown;
  } catch {
    return undefined;
  }
  if (typeof breakdown !== 'object' || breakdown === null) return undefined;
  const tokens = breakdown as Record<string, unknown>;
  if (!PARTS.every((part) => Number.isSafeInteger(tokens[part]))) return undefined;
  if (tokens['messages_tokens'] === 0) return undefined;
  return {
    systemHash: hashValue([CONTEXT_USAGE, tokens['system_prompt_tokens'], tokens['memory_files_tokens']]),
    tools: [
      { name: '(built-in tools)', schemaHash: hashValue([CONTEXT_USAGE, tokens['builtin_tools_tokens']]) },
      { name: '(MCP tools)', schemaHash: hashValue([CONTEXT_USAGE, tokens['mcp_tools_tokens']]) },
    ],
  };
}

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
    provider: providerOf(text(a, 'auth_type')),
    model,
    startMs: endMs - (millis(a, 'duration_ms') ?? 0),
    endMs,
    ttftMs: millis(a, 'ttft_ms'),
  };
  // output_token_count already includes reasoning tokens for OpenAI-compatible
  // providers, so thoughts_token_count is not added.
  const tokens = inclusive(total, { read: count(a, 'cached_content_token_count'), output: count(a, 'output_token_count') });
  noteSessionModel(context, sessionId, call.agentId, model);
  const joined = responseRecord(context, streamKey(sessionId, promptId, call.agentId), call, spanJoin);
  return { events: [callEvent(call, {}, tokens), ...joined.events], halves: joined.halves };
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
    ttftMs: millis(a, 'ttft_ms'),
  };
  const tokens = inclusive(total, {
    // Qwen Code's log record reports an unreported read as 0; the span must agree, whichever arrives first.
    read: count(a, 'gen_ai.usage.cache_read.input_tokens') ?? 0,
    write: count(a, 'gen_ai.usage.cache_creation.input_tokens') ?? count(a, 'gen_ai.usage.cache_write.input_tokens'),
    output: count(a, 'gen_ai.usage.output_tokens'),
  });
  noteSessionModel(context, call.sessionId, call.agentId, call.model);
  // Placed by its api_response record (a join on the response id, through the
  // store), so that the snapshot is the same whichever record comes first, at whichever node.
  const parts = contextPrefix(a);
  return { events: [callEvent(call, {}, tokens)], halves: parts === undefined ? [] : [spanHalf(context, spanJoinKey('qwen-code', requestId), parts)] };
}

export const qwenCode: Source = {
  name: 'qwen-code',
  log(record, context) {
    const name = eventName(record);
    if (!name.startsWith(PREFIX)) return undefined;
    if (name === 'qwen-code.api_request') return apiRequest(record, context);
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
