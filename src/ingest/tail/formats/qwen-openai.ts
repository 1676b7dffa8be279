// Qwen Code's OpenAI request logs (`model.enableOpenAILogging: true` in its
// settings, or --openai-logging): one pretty-printed JSON file per model
// call, `logs/openai/openai-<time>-<id>.json` under the project (or
// `model.openAILoggingDir`), written whole once the call ends:
//   { timestamp, request, response, error, context: { promptId, sessionId }, system }
// `request` is the OpenAI chat request as sent (model, messages, tools, …),
// `response` the completion with its id and usage. Each file becomes one turn
// with the full snapshot — a hash per system block, per tool in the order
// sent, per message — and the usage; the text is hashed and dropped. The
// request id is the provider's response id, the one Qwen Code's telemetry
// names: the same call sent over OTLP too is one turn, completed here.
import { dirname } from 'node:path';
import { buildSnapshot } from '../../../core/snapshot/index.js';
import { toCacheEvent } from '../../http/events.js';
import { qwenAgent } from '../../otlp/sources/qwen-code.js';
import { jsonUnit, type Decoder, type FileContext } from './decoder.js';

/** How such a file begins; an OpenTelemetry dump never starts with these keys. */
export const QWEN_OPENAI_HEAD = /^\{\s*"timestamp"\s*:\s*"[^"]*"\s*,\s*"request"\s*:/;

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

const text = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);

/** The turn event of one file, or the reason it cannot be read (a path into the file, and what is wrong). */
function turnOf(file: Json): { event: unknown } | { error: string } | undefined {
  const { request, response, context } = file;
  // A failed call (`error` set) has no response and no usage.
  if (response === null || response === undefined) return undefined;
  if (!isObject(request)) return { error: 'request: expected the request as an object' };
  if (!isObject(response)) return { error: 'response: expected an object' };
  const requestId = text(response.id);
  if (requestId === undefined) return { error: 'response.id: required to name the call' };
  const sessionId = isObject(context) ? text(context.sessionId) : undefined;
  if (sessionId === undefined) return { error: 'context.sessionId: required to place the call in a session' };
  const built = buildSnapshot(request, 'openai-chat');
  if (!built.ok) return { error: `request.${built.error}` };
  const ts = Date.parse(String(file.timestamp));
  if (!Number.isFinite(ts)) return { error: 'timestamp: expected an ISO 8601 time' };
  const event: Json = {
    type: isObject(response.usage) ? 'turn' : 'snapshot',
    requestId,
    sessionId,
    agentId: qwenAgent(isObject(context) ? text(context.promptId) : undefined, undefined),
    // Written once the response ended: the request's start is not in the file.
    ts,
    provider: 'openai',
    ...built.snapshot,
    ...(isObject(response.usage) ? { usage: response.usage } : {}),
  };
  return { event };
}

/** A Qwen Code log file's name, as its project listing shows it. */
const LOG_FILE_NAME = /openai-\d{4}-\d{2}-\d{2}T[\w.-]*\.json/;

/** The texts of a chat message's content: a string, or the text of its parts. */
function* contentTexts(message: unknown): Generator<string> {
  if (!isObject(message)) return;
  const { content } = message;
  if (typeof content === 'string') yield content;
  else if (Array.isArray(content)) for (const part of content) if (isObject(part) && typeof part.text === 'string') yield part.text;
}

/** Whether the request's messages list Qwen Code's own log files (the logs are inside the project it lists). */
function listsItsLogs(request: Json): boolean {
  if (!Array.isArray(request.messages)) return false;
  for (const message of request.messages) for (const text of contentTexts(message)) if (LOG_FILE_NAME.test(text)) return true;
  return false;
}

export const LOGS_IN_PROJECT_NOTICE =
  'Qwen Code lists these log files in the project listing it sends, so its first message changes with every call and every call is a cache break. ' +
  'Write them outside the project: --openai-logging-dir (model.openAILoggingDir) with a directory outside it.';

/** Directories already warned about: said once per directory, not once per file. */
const warnedDirectories = new Set<string>();

export function qwenOpenAiDecoder(file: FileContext): Decoder {
  const directory = dirname(file.path);
  return {
    decode(bytes, start, end, line, out) {
      out.units++;
      const unit = jsonUnit(bytes, start, end, line, out);
      if (unit === undefined) return;
      const { value } = unit;
      if (!isObject(value)) {
        out.rejected.push({ line, error: 'expected an object with timestamp, request, response and context' });
        return;
      }
      if (!warnedDirectories.has(directory) && isObject(value.request) && listsItsLogs(value.request)) {
        warnedDirectories.add(directory);
        out.notices.push(LOGS_IN_PROJECT_NOTICE);
      }
      const turn = turnOf(value);
      if (turn === undefined) {
        out.ignored++;
        return;
      }
      if ('error' in turn) {
        out.rejected.push({ line, error: turn.error });
        return;
      }
      const converted = toCacheEvent(turn.event);
      if (converted.ok) out.events.push(converted.event);
      else out.rejected.push({ line, error: converted.error });
    },
    waiting: () => false,
  };
}
