// Snapshot builders: a raw request body, as the provider API receives it, →
// the hashes, names, counts and marker positions of its cacheable prefix.
// Nothing of the content is kept (SPEC §7).
import type { SnapshotContent } from '../types.js';
import { anthropicSnapshot } from './anthropic.js';
import { bedrockSnapshot } from './bedrock.js';
import { isRecord, SnapshotError, type JsonObject, type SnapshotOptions } from './common.js';
import { geminiSnapshot } from './gemini.js';
import { openaiChatSnapshot, openaiResponsesSnapshot } from './openai.js';
import { detectRequestApi, type RequestApi } from './shape.js';

export { SnapshotError, type SnapshotOptions } from './common.js';
export { hashMessages, readRawSystem, type SystemHashes } from './content.js';
export { detectRequestApi, REQUEST_APIS, type RequestApi } from './shape.js';
export { readRawTools } from './tools.js';

export type SnapshotResult = { ok: true; snapshot: SnapshotContent } | { ok: false; field: string; error: string };

const BUILDERS: Record<RequestApi, (body: JsonObject, options: SnapshotOptions) => SnapshotContent> = {
  anthropic: anthropicSnapshot,
  'openai-chat': openaiChatSnapshot,
  'openai-responses': openaiResponsesSnapshot,
  gemini: geminiSnapshot,
  bedrock: bedrockSnapshot,
};

/** Builds the snapshot of a raw request body; `api` is detected from the body's shape when not given. */
export function buildSnapshot(body: unknown, api?: RequestApi, options: SnapshotOptions = {}): SnapshotResult {
  try {
    if (!isRecord(body)) throw new SnapshotError('body', 'expected a JSON object');
    const chosen = api ?? detectRequestApi(body);
    if (chosen === undefined) throw new SnapshotError('body', 'cannot tell which API the request is for; pass api');
    // `api` may come from untyped input (an event field).
    if (!Object.hasOwn(BUILDERS, chosen)) throw new SnapshotError('api', `unknown request API "${String(chosen)}"`);
    return { ok: true, snapshot: BUILDERS[chosen](body, options) };
  } catch (error) {
    if (error instanceof SnapshotError) return { ok: false, field: error.field, error: error.message };
    // Hashing walks the content: a body nested deeper than the stack allows is refused, not a crash.
    if (error instanceof RangeError && /call stack/i.test(error.message)) return { ok: false, field: 'body', error: 'body: nested too deeply to read' };
    throw error;
  }
}
