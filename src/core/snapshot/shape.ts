// Which API a raw request body was written for, from its shape alone.
import { isRecord, type JsonObject } from './common.js';

export const REQUEST_APIS = ['anthropic', 'openai-chat', 'openai-responses', 'gemini', 'bedrock'] as const;
export type RequestApi = (typeof REQUEST_APIS)[number];

const BEDROCK_KEYS = ['modelId', 'toolConfig', 'inferenceConfig', 'additionalModelRequestFields', 'guardrailConfig'];
const ANTHROPIC_KEYS = ['system', 'anthropic_version', 'betas', 'stop_sequences'];
const ANTHROPIC_BLOCKS = new Set<unknown>(['tool_use', 'tool_result', 'thinking', 'redacted_thinking', 'document']);

function blocksOf(message: unknown): unknown[] {
  return isRecord(message) && Array.isArray(message.content) ? message.content : [];
}

/** Bedrock blocks are keyed by kind ({text}, {toolUse}, {cachePoint}); the others carry a `type`. */
function hasUntypedBlock(blocks: unknown): boolean {
  return Array.isArray(blocks) && blocks.some((block) => isRecord(block) && !('type' in block));
}

function looksAnthropic(body: JsonObject, messages: unknown[]): boolean {
  if (ANTHROPIC_KEYS.some((key) => key in body)) return true;
  // OpenAI chat tools wrap the name in `function`.
  if (Array.isArray(body.tools) && body.tools.some((tool) => isRecord(tool) && 'name' in tool)) return true;
  return messages.some((message) => blocksOf(message).some((block) => isRecord(block) && ANTHROPIC_BLOCKS.has(block.type)));
}

/** The API a body was written for, or undefined when its shape says nothing. Plain chat defaults to OpenAI chat. */
export function detectRequestApi(body: unknown): RequestApi | undefined {
  if (!isRecord(body)) return undefined;
  if (body.contents !== undefined) return 'gemini';
  if (body.input !== undefined || body.instructions !== undefined) return 'openai-responses';
  const messages = body.messages;
  if (!Array.isArray(messages)) return undefined;
  if (BEDROCK_KEYS.some((key) => key in body) || hasUntypedBlock(body.system)) return 'bedrock';
  if (messages.some((message) => hasUntypedBlock(blocksOf(message)))) return 'bedrock';
  return looksAnthropic(body, messages) ? 'anthropic' : 'openai-chat';
}
