// OTel GenAI semantic conventions (v1.40+ and the genai repo's main), with
// the OpenLLMetry/Traceloop names that predate them: inference spans and the
// `gen_ai.client.inference.operation.details` event, from any instrumentation.
//
// `gen_ai.usage.input_tokens` INCLUDES the cache ("SHOULD include all types of
// input tokens, including cached tokens"); the cache counts are parts of it.
// An instrumentation that sends Anthropic's exclusive count instead is clamped,
// not double counted: at worst its few uncached tokens go missing.
import type { Attributes, LogRecord, Span } from '../records.js';
import { eventName, eventTime, firstCount, firstText, text } from './attributes.js';
import { callEvent, inclusive, providerLabel, snapshotEvent, type Call, type Tokens } from './events.js';
import { combine, systemHashes, toolHashes, type Prefix } from './prefix.js';
import { ignored, MappingError, type Outcome, type Source } from './source.js';

export const GENAI_DETAILS_EVENT = 'gen_ai.client.inference.operation.details';

const INPUT = ['gen_ai.usage.input_tokens', 'gen_ai.usage.prompt_tokens'];
const OUTPUT = ['gen_ai.usage.output_tokens', 'gen_ai.usage.completion_tokens'];
const READ = ['gen_ai.usage.cache_read.input_tokens', 'gen_ai.usage.cache_read_input_tokens'];
// cache_write is the newer name of cache_creation (semantic-conventions-genai PR #440).
const WRITE = [
  'gen_ai.usage.cache_write.input_tokens',
  'gen_ai.usage.cache_creation.input_tokens',
  'gen_ai.usage.cache_creation_input_tokens',
];

/** Operations that are one model call. */
const CALLS = new Set(['chat', 'generate_content', 'text_completion', 'completion']);
/** Operations whose usage sums the calls under them: counting them too would count each call twice. */
const AGGREGATES = new Set(['invoke_agent', 'create_agent', 'invoke_workflow']);

/** The usage of a call, or undefined when the attributes carry no input count. */
function genaiTokens(a: Attributes): Tokens | undefined {
  const total = firstCount(a, INPUT);
  if (total === undefined) return undefined;
  return inclusive(total, { read: firstCount(a, READ), write: firstCount(a, WRITE), output: firstCount(a, OUTPUT) });
}

/** The prefix hashes from opt-in content attributes; undefined when neither is present. */
export function genaiPrefix(a: Attributes): Prefix | undefined {
  const system = a['gen_ai.system_instructions'] ?? undefined;
  const tools = a['gen_ai.tool.definitions'] ?? undefined;
  if (system === undefined && tools === undefined) return undefined;
  return combine(
    system === undefined ? {} : systemHashes('gen_ai.system_instructions', system),
    tools === undefined ? {} : toolHashes('gen_ai.tool.definitions', tools),
  );
}

/** A request id from trace context, for calls whose telemetry names none: a span and the events inside it agree. */
export function traceRequestId(traceId: string, spanId: string): string | undefined {
  return traceId !== '' && spanId !== '' ? `${traceId}:${spanId}` : undefined;
}

/** The session a GenAI call belongs to; without one, its trace (one agent run) is the best available lineage. */
function sessionOf(a: Attributes, traceId: string): string {
  const sessionId = firstText(a, ['gen_ai.conversation.id', 'session.id', 'traceloop.association.properties.session_id']);
  if (sessionId !== undefined) return sessionId;
  if (traceId !== '') return traceId;
  throw new MappingError('gen_ai.conversation.id: required when the record has no trace id');
}

function callOf(a: Attributes, trace: { traceId: string; spanId: string }, startMs: number, endMs: number): Call {
  const requestId = text(a, 'gen_ai.response.id') ?? traceRequestId(trace.traceId, trace.spanId);
  if (requestId === undefined) throw new MappingError('gen_ai.response.id: required when the record has no trace and span id');
  return {
    requestId,
    sessionId: sessionOf(a, trace.traceId),
    agentId: text(a, 'gen_ai.agent.name') ?? 'main',
    provider: providerLabel(firstText(a, ['gen_ai.provider.name', 'gen_ai.system']) ?? 'unknown'),
    model: firstText(a, ['gen_ai.request.model', 'gen_ai.response.model']),
    startMs,
    endMs,
  };
}

function inferenceSpan(span: Span): Outcome | undefined {
  const a = span.attributes;
  const tokens = genaiTokens(a);
  if (tokens === undefined) return undefined;
  const operation = firstText(a, ['gen_ai.operation.name', 'llm.request.type']);
  if (operation !== undefined && AGGREGATES.has(operation)) return ignored('aggregate');
  if (operation !== undefined && !CALLS.has(operation)) return ignored('not_generation');
  return { events: [callEvent(callOf(a, span, span.startMs, span.endMs), genaiPrefix(a) ?? {}, tokens)] };
}

/** The details event: a call's usage and/or prefix, reported after the response. */
function detailsEvent(record: LogRecord): Outcome {
  const a = record.attributes;
  const at = eventTime(record);
  const tokens = genaiTokens(a);
  const prefix = genaiPrefix(a);
  if (tokens === undefined && prefix === undefined) return ignored('no_usage');
  const call = callOf(a, record, at, at);
  if (tokens !== undefined) return { events: [callEvent(call, prefix ?? {}, tokens)] };
  if (call.model === undefined) return ignored('no_model');
  const { requestId, sessionId, agentId, provider } = call;
  return { events: [snapshotEvent({ requestId, sessionId, agentId, provider, ts: at }, { ...prefix, model: call.model })] };
}

export const genai: Source = {
  name: 'genai',
  log(record) {
    return eventName(record) === GENAI_DETAILS_EVENT ? detailsEvent(record) : undefined;
  },
  span: inferenceSpan,
};

