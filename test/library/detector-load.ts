// Events for the Detector's memory tests: conversations that grow by two
// messages a turn, each turn with its own copies of the hashes (as parsing
// a request body gives them).
import type { TurnEvent } from '../../src/core/types.js';
import { turn, usage } from '../core/scenario.js';

/** The first `count` message hashes of a conversation, fresh strings. */
export function messages(count: number, rewrittenAt = -1): string[] {
  return Array.from({ length: count }, (_, j) => (j === rewrittenAt ? 'f' : '0').concat(j.toString(16).padStart(15, '0')).slice(0));
}

/** Turn i of one long conversation: 2i + 2 messages. */
export function conversationTurn(i: number, sessionId = 'long'): TurnEvent {
  const hashes = messages(2 * i + 2);
  // As a raw body's snapshot has it: a size per message, which must not grow the state with turns times messages.
  const prefixChars = [8_000, ...hashes.map((_, j) => 8_000 + 300 * (j + 1))];
  return turn(`${sessionId}_${i}`, { sessionId, at: i * 10_000, messageHashes: hashes, prefixChars, usage: i === 0 ? usage(0, 50_000) : usage(50_000, 500) });
}

/** Turn i of session s of a load: 200 messages and more. */
export function loadTurn(s: number, i: number): TurnEvent {
  const sessionId = `load_${s}`;
  return turn(`${sessionId}_${i}`, { sessionId, at: i * 10_000, messageHashes: messages(200 + 2 * i), usage: i === 0 ? usage(0, 50_000) : usage(50_000, 500) });
}
