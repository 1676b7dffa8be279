// Claude Code (2.1.88 and 2.1.332). Each model call is a log record whose
// body is `claude_code.api_request` (`event.name` is just `api_request`) with
// Anthropic-shaped counts: `input_tokens` EXCLUDES the cache. 2.1.88 sends
// the counts as strings and has no request_id or query_source.
//
// With OTEL_LOG_RAW_API_BODIES=1 it also logs each request body and response
// body; claude-bodies.ts turns those into the call's full snapshot.
import { COMPACT_AGENT, MAIN_AGENT } from '../../../core/stream.js';
import type { Attributes, LogRecord, Origin } from '../records.js';
import { count, eventName, eventTime, millis, requireSession, serviceName, text } from './attributes.js';
import { requestBody, responseBody } from './claude-bodies.js';
import { derivedRequestId, usageEvent, type Call } from './events.js';
import { ignored, MappingError, type Outcome, type Source } from './source.js';

const PREFIX = 'claude_code.';

/** The query source of a compaction: the request that summarises the main conversation. */
const COMPACT_SOURCE = 'compact';

/**
 * query_source → stream. The main thread (`repl_main_thread…`
 * interactively, `sdk` headless) is main; a compaction goes to the session's
 * compact stream, which makes the next main turn an expected miss (SPEC
 * §4.9); a subagent is its name plus its agent_id (one run, one
 * conversation); any other side query is its own stream.
 */
export function claudeAgent(a: Attributes): string {
  const source = text(a, 'query_source');
  if (source === COMPACT_SOURCE) return COMPACT_AGENT;
  if (source === undefined || source === 'sdk' || source.startsWith('repl_main_thread')) return MAIN_AGENT;
  const name = text(a, 'agent.name') ?? source;
  const run = text(a, 'agent_id');
  return run === undefined ? name : `${name}#${run}`;
}

function fromClaudeCode(origin: Origin): boolean {
  return serviceName(origin) === 'claude-code' || origin.scope.name.startsWith('com.anthropic.claude_code');
}

function apiRequest(record: LogRecord): Outcome {
  const a = record.attributes;
  const uncached = count(a, 'input_tokens');
  if (uncached === undefined) throw new MappingError('input_tokens: required');
  const sessionId = requireSession(record, a);
  const model = text(a, 'model');
  const endMs = eventTime(record);
  const call: Call = {
    requestId:
      text(a, 'request_id') ??
      // 2.1.88 names no request: these identify the call, the same when the record is sent again.
      derivedRequestId('claude_code', [sessionId, text(a, 'prompt.id'), a['event.sequence'], a['event.timestamp'] ?? record.timeMs, model]),
    sessionId,
    agentId: claudeAgent(a),
    provider: 'anthropic',
    model,
    startMs: endMs - (millis(a, 'duration_ms') ?? 0),
    endMs,
    ttftMs: millis(a, 'ttft_ms'),
  };
  // A usage event, not a turn: the request body, when logged, brings the snapshot.
  return {
    events: [
      usageEvent(call, {
        uncached,
        read: count(a, 'cache_read_tokens'),
        write: count(a, 'cache_creation_tokens'),
        write1h: count(a, 'cache_creation_1h_tokens'),
        output: count(a, 'output_tokens'),
      }),
    ],
  };
}

export const claudeCode: Source = {
  name: 'claude-code',
  log(record, context) {
    const name = eventName(record);
    if (!name.startsWith(PREFIX)) return undefined;
    switch (name) {
      case 'claude_code.api_request':
        return apiRequest(record);
      case 'claude_code.api_request_body':
        return requestBody(record, context, claudeAgent(record.attributes));
      case 'claude_code.api_response_body':
        return responseBody(record, context);
      default:
        return ignored('unused_event');
    }
  },
  // Claude Code's (beta) spans repeat what its log records already count.
  span(span) {
    return span.name.startsWith(PREFIX) || fromClaudeCode(span) ? ignored('covered_by_logs') : undefined;
  },
};
