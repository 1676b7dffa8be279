// Raw prefix content some telemetry carries (system instructions, tool
// definitions) → the snapshot's hashes, with the core's hashing. The content
// is read, hashed and dropped here; errors name the attribute, never the text.
import { hashMessages, readRawSystem, readRawTools, SnapshotError } from '../../../core/snapshot/index.js';
import type { SnapshotContent } from '../../../core/types.js';
import { MappingError } from './source.js';

export type Prefix = Omit<SnapshotContent, 'model'>;

function hashed<T>(attribute: string, hash: () => T): T {
  try {
    return hash();
  } catch (error) {
    if (error instanceof SnapshotError) {
      // The core names the field after its own input (toolDefinitions[3].name): name the attribute instead.
      const where = error.field.replace(/^(toolDefinitions|system)/, attribute);
      throw new MappingError(`${where}: ${error.message.slice(error.field.length + 2)}`);
    }
    throw error;
  }
}

/** A system prompt as text, blocks or a JSON string of blocks; text that is not JSON is the prompt itself. */
export function systemHashes(attribute: string, raw: unknown): Prefix {
  let value = raw;
  if (typeof raw === 'string') {
    try {
      value = JSON.parse(raw);
    } catch {
      value = raw;
    }
  }
  const { markers, ...hashes } = hashed(attribute, () => readRawSystem(value));
  return markers.length > 0 ? { ...hashes, cacheControl: { enabled: true, markers } } : hashes;
}

/** Tool definitions as an array of objects, of JSON strings, or a JSON string of the array. */
export function toolHashes(attribute: string, raw: unknown, strip: readonly string[] = []): Prefix {
  const parse = (value: unknown): unknown => {
    if (typeof value !== 'string') return value;
    try {
      return JSON.parse(value);
    } catch {
      throw new MappingError(`${attribute}: expected JSON, got a string that does not parse`);
    }
  };
  const list = parse(raw);
  if (!Array.isArray(list)) throw new MappingError(`${attribute}: expected an array of tool definitions`);
  const tools = list.map((item) => {
    const tool = parse(item);
    if (strip.length === 0 || typeof tool !== 'object' || tool === null) return tool;
    const kept: Record<string, unknown> = { ...(tool as Record<string, unknown>) };
    for (const key of strip) delete kept[key];
    return kept;
  });
  const read = hashed(attribute, () => readRawTools(tools));
  return read.markers.length > 0 ? { tools: read.tools, cacheControl: { enabled: true, markers: read.markers } } : { tools: read.tools };
}

/** Prefix parts read from separate attributes, as one: their markers (from system blocks and tool definitions) together. */
export function combine(...parts: Prefix[]): Prefix {
  const markers = parts.flatMap((part) => part.cacheControl?.markers ?? []);
  const combined: Prefix = Object.assign({}, ...parts);
  if (markers.length > 0) combined.cacheControl = { enabled: true, markers };
  return combined;
}

/**
 * A request's messages as a harness logs them (`request_text`: the JSON of
 * its Gemini-shaped contents, or of a request holding them) → one hash per
 * message; the text is dropped. Undefined when absent or unreadable: prompt
 * logging turned off, or a text cut short by an attribute length limit.
 */
export function messageHashesOf(raw: unknown): string[] | undefined {
  if (typeof raw !== 'string') return undefined;
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return undefined;
  }
  const contents = Array.isArray(value) ? value : typeof value === 'object' && value !== null ? (value as { contents?: unknown }).contents : undefined;
  if (!Array.isArray(contents)) return undefined;
  try {
    return hashMessages(contents, 'request_text');
  } catch (error) {
    // A message that is not an object, or nested deeper than hashing can walk.
    if (error instanceof SnapshotError || (error instanceof RangeError && /call stack/i.test(error.message))) return undefined;
    throw error;
  }
}
