// OpenInference (Arize Phoenix and its instrumentors): LLM spans with
// `llm.token_count.prompt`, which INCLUDES the cache (the LangChain tracer
// sums input + cache_creation + cache_read), and the cache read and write as
// `llm.token_count.prompt_details.*`. Messages and tools come flattened
// (`llm.input_messages.0.message.role`…); the system messages and tool
// schemas are hashed for the snapshot and dropped.
import type { Attributes, Span } from '../records.js';
import { count, firstText, text } from './attributes.js';
import { callEvent, inclusive, providerLabel, type Call } from './events.js';
import { traceRequestId } from './genai.js';
import { combine, systemHashes, toolHashes, type Prefix } from './prefix.js';
import { ignored, MappingError, type Outcome, type Source } from './source.js';

const MESSAGES = 'llm.input_messages';

/** The text of each system message, in order; undefined when the messages were not recorded. */
function systemBlocks(a: Attributes): string[] | undefined {
  if (a[`${MESSAGES}.0.message.role`] === undefined) return undefined;
  const blocks: string[] = [];
  for (let i = 0; a[`${MESSAGES}.${i}.message.role`] !== undefined; i++) {
    if (a[`${MESSAGES}.${i}.message.role`] !== 'system') continue;
    const content = text(a, `${MESSAGES}.${i}.message.content`);
    if (content !== undefined) blocks.push(content);
    for (let j = 0; ; j++) {
      const part = text(a, `${MESSAGES}.${i}.message.contents.${j}.message_content.text`);
      if (part === undefined) break;
      blocks.push(part);
    }
  }
  return blocks;
}

function toolSchemas(a: Attributes): unknown[] {
  const schemas: unknown[] = [];
  for (let i = 0; a[`llm.tools.${i}.tool.json_schema`] !== undefined; i++) schemas.push(a[`llm.tools.${i}.tool.json_schema`]);
  return schemas;
}

function prefixOf(a: Attributes): Prefix {
  const system = systemBlocks(a);
  const tools = toolSchemas(a);
  return combine(system !== undefined ? systemHashes(MESSAGES, system) : {}, tools.length > 0 ? toolHashes('llm.tools', tools) : {});
}

function llmSpan(span: Span): Outcome | undefined {
  const a = span.attributes;
  const total = count(a, 'llm.token_count.prompt');
  if (total === undefined) return undefined;
  // Chain and agent spans may roll up the counts of the LLM spans under them.
  const kind = text(a, 'openinference.span.kind');
  if (kind !== undefined && kind !== 'LLM') return ignored('aggregate');
  const requestId = text(a, 'gen_ai.response.id') ?? traceRequestId(span.traceId, span.spanId);
  if (requestId === undefined) throw new MappingError('span id: required to identify the call');
  const call: Call = {
    requestId,
    sessionId: text(a, 'session.id') ?? span.traceId,
    agentId: firstText(a, ['agent.name', 'gen_ai.agent.name']) ?? 'main',
    provider: providerLabel(firstText(a, ['llm.provider', 'llm.system']) ?? 'unknown'),
    model: text(a, 'llm.model_name'),
    startMs: span.startMs,
    endMs: span.endMs,
  };
  const tokens = inclusive(total, {
    read: count(a, 'llm.token_count.prompt_details.cache_read'),
    write: count(a, 'llm.token_count.prompt_details.cache_write'),
    output: count(a, 'llm.token_count.completion'),
  });
  return { events: [callEvent(call, prefixOf(a), tokens)] };
}

export const openInference: Source = { name: 'openinference', span: llmSpan };
