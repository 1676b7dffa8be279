// The messages as a Claude model that keeps only the current turn's thinking
// sees them (caching.ts, EARLIER_THINKING): a turn starts with a user message
// that is more than tool results, and the thinking blocks of every assistant
// message before the latest such message are stripped by the API. What it
// strips is not in the prompt it caches, so the snapshot hashes the messages
// without it: the turn that starts a new user turn then names the first
// assistant message that lost its thinking as the first changed message,
// which is where the cached prefix ends. Anthropic's blocks and Bedrock
// Converse's are both read.
import { stripsEarlierThinking } from '../caching.js';
import { isRecord } from './common.js';

/** `thinking` and `redacted_thinking` (Anthropic), `reasoningContent` (Converse). */
function isThinking(block: unknown): boolean {
  return isRecord(block) && (block.type === 'thinking' || block.type === 'redacted_thinking' || Object.hasOwn(block, 'reasoningContent'));
}

function isToolResult(block: unknown): boolean {
  return isRecord(block) && (block.type === 'tool_result' || Object.hasOwn(block, 'toolResult'));
}

/** A user message with more than tool results: text, an image, a document, or plain string content. */
function startsTurn(message: unknown): boolean {
  if (!isRecord(message) || message.role !== 'user') return false;
  const content = message.content;
  return typeof content === 'string' || (Array.isArray(content) && content.some((block) => !isToolResult(block)));
}

function thinks(message: unknown): message is { role: 'assistant'; content: unknown[] } {
  return isRecord(message) && message.role === 'assistant' && Array.isArray(message.content) && message.content.some(isThinking);
}

function latestTurnStart(messages: readonly unknown[]): number {
  for (let i = messages.length - 1; i >= 0; i--) if (startsTurn(messages[i])) return i;
  return -1;
}

/**
 * The messages as `model` sees them: unchanged for a model that keeps every
 * thinking block; otherwise without the thinking of assistant messages before
 * the latest turn start. `whole` is false for the leading messages of a cut
 * body: a turn may start past the cut, so an assistant message with thinking
 * after the latest turn start seen may or may not lose it, and the messages
 * are kept only up to it.
 */
export function messagesAsSeen(model: string, messages: readonly unknown[], whole = true): readonly unknown[] {
  if (!stripsEarlierThinking(model)) return messages;
  const start = latestTurnStart(messages);
  const seen = messages.map((message, i) => (i < start && thinks(message) ? { ...message, content: message.content.filter((block) => !isThinking(block)) } : message));
  if (whole) return seen;
  const unsure = seen.findIndex((message, i) => i > start && thinks(message));
  return unsure < 0 ? seen : seen.slice(0, unsure);
}
