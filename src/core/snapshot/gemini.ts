// Gemini generateContent request → snapshot. The REST API takes camelCase and
// snake_case field names alike, and names the model in the URL. Caching is
// implicit unless the request points at an explicit cache (cachedContent).
import { hashString } from '../hash.js';
import type { CacheControl, SnapshotContent } from '../types.js';
import { expectString, modelOf, optionalArray, prefixChars, type JsonObject, type SnapshotOptions } from './common.js';
import { hashMessages, readSystem } from './content.js';
import { readTools } from './tools.js';

/** The value of a field and the spelling it was found under. */
function field(body: JsonObject, camel: string, snake: string): { value: unknown; name: string } {
  return body[camel] === undefined && body[snake] !== undefined
    ? { value: body[snake], name: snake }
    : { value: body[camel], name: camel };
}

/** "models/gemini-2.5-pro" and Vertex resource paths name the same model as "gemini-2.5-pro". */
function modelName(model: string): string {
  const at = model.lastIndexOf('models/');
  return at < 0 ? model : model.slice(at + 'models/'.length);
}

function cacheSettings(body: JsonObject): CacheControl {
  const cached = field(body, 'cachedContent', 'cached_content');
  if (cached.value === undefined || cached.value === null) return { enabled: true, scope: 'auto' };
  return { enabled: true, scope: 'cachedContent', key: hashString(expectString(cached.value, cached.name)) };
}

export function geminiSnapshot(body: JsonObject, options: SnapshotOptions): SnapshotContent {
  const system = field(body, 'systemInstruction', 'system_instruction');
  const snapshot: SnapshotContent = {
    model: modelName(modelOf(options, body.model, 'model')),
    ...readSystem(system.value, system.name).hashes,
    tools: readTools(optionalArray(body.tools, 'tools'), 'tools').tools,
    cacheControl: cacheSettings(body),
    messageHashes: hashMessages(body.contents, 'contents'),
  };
  // hashMessages took contents as an array.
  snapshot.prefixChars = prefixChars([body.tools, system.value], body.contents as unknown[]);
  return snapshot;
}
