// Vercel AI SDK telemetry (`experimental_telemetry`). Only the
// `ai.*.doGenerate` / `ai.*.doStream` spans are model calls; `ai.generateText`
// and `ai.streamText` sum the usage of every step under them.
//
// Whether `inputTokens` includes the cache depends on the SDK version:
// - v6 (ai@6) INCLUDES it and splits it in `ai.usage.inputTokenDetails.*`;
// - v5 and v4 pass the provider's own count through: inclusive for OpenAI and
//   Gemini, EXCLUSIVE for Anthropic and Bedrock, whose cache write is only in
//   the provider metadata.
import type { Attributes, Span } from '../records.js';
import { count, firstCount, firstText, text } from './attributes.js';
import { callEvent, inclusive, providerLabel, type Call, type Tokens } from './events.js';
import { traceRequestId } from './genai.js';
import { combine, systemHashes, toolHashes, type Prefix } from './prefix.js';
import { ignored, MappingError, type Outcome, type Source } from './source.js';

const DETAILS = 'ai.usage.inputTokenDetails.';

/** `ai.model.provider` ("anthropic.messages", "openai.chat", "google.generative-ai"…) → provider. */
function vercelProvider(name: string | undefined): string {
  if (name === undefined) return 'unknown';
  if (name.includes('anthropic')) return 'anthropic';
  if (name.includes('bedrock')) return 'bedrock';
  return providerLabel(name.split('.')[0]!);
}

/** v4/v5 Anthropic and Bedrock: the cache write is only in the provider metadata, a JSON string. */
function metadataWrite(a: Attributes): number | undefined {
  const raw = a['ai.response.providerMetadata'];
  if (typeof raw !== 'string') return undefined;
  let metadata: { anthropic?: { cacheCreationInputTokens?: unknown }; bedrock?: { usage?: { cacheWriteInputTokens?: unknown } } };
  try {
    metadata = JSON.parse(raw) as typeof metadata;
  } catch {
    return undefined;
  }
  const write = metadata.anthropic?.cacheCreationInputTokens ?? metadata.bedrock?.usage?.cacheWriteInputTokens;
  return typeof write === 'number' && Number.isSafeInteger(write) && write >= 0 ? write : undefined;
}

function tokensOf(a: Attributes, total: number, provider: string): Tokens {
  const output = firstCount(a, ['ai.usage.outputTokens', 'ai.usage.completionTokens']);
  const noCache = count(a, `${DETAILS}noCacheTokens`);
  const detailRead = count(a, `${DETAILS}cacheReadTokens`);
  const detailWrite = count(a, `${DETAILS}cacheWriteTokens`);
  const read = detailRead ?? count(a, 'ai.usage.cachedInputTokens');
  if (noCache !== undefined || detailRead !== undefined || detailWrite !== undefined) {
    const parts = { read, write: detailWrite, output };
    return noCache !== undefined ? { ...parts, uncached: noCache } : inclusive(total, parts);
  }
  if (provider === 'anthropic' || provider === 'bedrock') return { uncached: total, read, write: metadataWrite(a), output };
  return inclusive(total, { read, output });
}

/** The recorded prompt (recordInputs): system messages and tools, hashed; nothing when it was not recorded. */
function prefixOf(a: Attributes): Prefix {
  const raw = a['ai.prompt.messages'];
  if (typeof raw !== 'string') return {};
  let messages: unknown;
  try {
    messages = JSON.parse(raw);
  } catch {
    throw new MappingError('ai.prompt.messages: expected JSON, got a string that does not parse');
  }
  if (!Array.isArray(messages)) throw new MappingError('ai.prompt.messages: expected an array of messages');
  // Only the content: providerOptions (where cache markers live) must not look like a changed prompt.
  const system = messages
    .filter((m): m is { role: string; content: unknown } => typeof m === 'object' && m !== null && m.role === 'system')
    .map((m) => m.content);
  const tools = a['ai.prompt.tools'];
  return combine(
    systemHashes('ai.prompt.messages', system),
    // With the prompt recorded, no tools attribute means no tools.
    tools === undefined || tools === null ? { tools: [] } : toolHashes('ai.prompt.tools', tools, ['providerOptions']),
  );
}

function modelCall(span: Span): Outcome | undefined {
  const a = span.attributes;
  const operation = text(a, 'ai.operationId') ?? (span.name.startsWith('ai.') ? span.name : undefined);
  if (operation === undefined) return undefined;
  const total = firstCount(a, ['ai.usage.inputTokens', 'ai.usage.promptTokens']);
  if (total === undefined) return ignored('no_usage');
  if (!/\.do(Generate|Stream)$/.test(operation)) return ignored('aggregate');
  const requestId = text(a, 'ai.response.id') ?? traceRequestId(span.traceId, span.spanId);
  if (requestId === undefined) throw new MappingError('ai.response.id: required when the span has no trace and span id');
  const provider = vercelProvider(text(a, 'ai.model.provider'));
  const call: Call = {
    requestId,
    sessionId:
      firstText(a, ['ai.telemetry.metadata.sessionId', 'ai.telemetry.metadata.session_id', 'session.id', 'gen_ai.conversation.id']) ??
      span.traceId,
    // functionId names the call site: another prompt, so another lineage.
    agentId:
      firstText(a, ['ai.telemetry.metadata.agentId', 'ai.telemetry.metadata.agent_id', 'gen_ai.agent.name', 'ai.telemetry.functionId']) ??
      'main',
    provider,
    model: firstText(a, ['ai.model.id', 'ai.response.model', 'gen_ai.request.model']),
    startMs: span.startMs,
    endMs: span.endMs,
  };
  return { events: [callEvent(call, prefixOf(a), tokensOf(a, total, provider))] };
}

export const vercelAi: Source = { name: 'vercel-ai', span: modelCall };
