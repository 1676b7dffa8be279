// Snapshot builders: a raw request body, as the provider API receives it, →
// the hashes, names, counts and marker positions of its cacheable prefix.
// Nothing of the content is kept (SPEC §7).
import type { SnapshotContent } from '../types.js';
import { anthropicCutSnapshot, anthropicSnapshot } from './anthropic.js';
import { bedrockSnapshot } from './bedrock.js';
import { isRecord, SnapshotError, type JsonObject, type SnapshotOptions } from './common.js';
import { readCutObject } from './cut.js';
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

/** Runs a builder: a body it cannot read is an error result naming the field, not a throw. */
function built(build: () => SnapshotContent): SnapshotResult {
  try {
    return { ok: true, snapshot: build() };
  } catch (error) {
    if (error instanceof SnapshotError) return { ok: false, field: error.field, error: error.message };
    // Hashing walks the content: a body nested deeper than the stack allows is refused, not a crash.
    if (error instanceof RangeError && /call stack/i.test(error.message)) return { ok: false, field: 'body', error: 'body: nested too deeply to read' };
    throw error;
  }
}

/** Builds the snapshot of a raw request body; `api` is detected from the body's shape when not given. */
export function buildSnapshot(body: unknown, api?: RequestApi, options: SnapshotOptions = {}): SnapshotResult {
  return built(() => {
    if (!isRecord(body)) throw new SnapshotError('body', 'expected a JSON object');
    const chosen = api ?? detectRequestApi(body);
    if (chosen === undefined) throw new SnapshotError('body', 'cannot tell which API the request is for; pass api');
    // `api` may come from untyped input (an event field).
    if (!Object.hasOwn(BUILDERS, chosen)) throw new SnapshotError('api', `unknown request API "${String(chosen)}"`);
    return BUILDERS[chosen](body, options);
  });
}

/**
 * The partial snapshot (SnapshotContent.partial) of the text of an Anthropic
 * request body that was cut short, or undefined when the text is not the
 * start of a JSON object.
 */
export function buildCutAnthropicSnapshot(text: string, options: SnapshotOptions = {}): SnapshotResult | undefined {
  const body = readCutObject(text);
  return body === undefined ? undefined : built(() => anthropicCutSnapshot(body, options));
}
