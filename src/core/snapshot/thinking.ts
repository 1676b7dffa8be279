// The messages as the model sees them, without the thinking the API strips.
// A turn starts with a user message that is more than tool results. A Claude
// model that keeps only the current turn's thinking (caching.ts,
// EARLIER_THINKING), or a request whose `clear_thinking_20251015` edit keeps
// the latest N turns' thinking, has the thinking blocks of every assistant
// message before those turns stripped. What is stripped is not in the prompt
// the API caches, so the snapshot hashes the messages without it: the request
// that starts a new turn then names the first assistant message that lost its
// thinking as the first changed message, which is where the cached prefix
// ends. Anthropic's blocks and Bedrock Converse's are both read.
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

/**
 * How many of the latest turns keep their thinking: a `clear_thinking_20251015`
 * edit of `context_management` sets it (`keep: "all"` or
 * `{type: "thinking_turns", value}`, one when left out); otherwise the model's
 * default, one turn for a model that strips earlier thinking.
 */
function turnsKept(model: string, contextManagement: unknown): number {
  const edits = isRecord(contextManagement) && Array.isArray(contextManagement.edits) ? contextManagement.edits : [];
  const edit = edits.find((e) => isRecord(e) && e.type === 'clear_thinking_20251015');
  if (!isRecord(edit)) return stripsEarlierThinking(model) ? 1 : Infinity;
  if (edit.keep === 'all') return Infinity;
  const value = isRecord(edit.keep) ? edit.keep.value : undefined;
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : 1;
}

/** Where the `kept`-th latest turn starts (-1 when fewer turns start); the length of the messages when none is kept. */
function keptFrom(messages: readonly unknown[], kept: number): number {
  if (kept === 0) return messages.length;
  let found = 0;
  for (let i = messages.length - 1; i >= 0; i--) if (startsTurn(messages[i]) && ++found === kept) return i;
  return -1;
}

/**
 * The messages as the model sees them: without the thinking of assistant
 * messages before the turns that keep theirs (turnsKept). `whole` is false
 * for the leading messages of a cut body: turns may start past the cut, so
 * the first assistant message that still holds thinking may or may not lose
 * it, and the messages are kept only up to it. A cut body whose
 * `context_management` was cut off is read with the model's default.
 */
export function messagesAsSeen(model: string, messages: readonly unknown[], contextManagement: unknown, whole = true): readonly unknown[] {
  const kept = turnsKept(model, contextManagement);
  if (kept === Infinity) return messages;
  const from = keptFrom(messages, kept);
  const seen = messages.map((message, i) => (i < from && thinks(message) ? { ...message, content: message.content.filter((block) => !isThinking(block)) } : message));
  if (whole) return seen;
  // Any number of turns may start past the cut: whatever thinking is left may still go.
  const unsure = seen.findIndex(thinks);
  return unsure < 0 ? seen : seen.slice(0, unsure);
}
