// cachebreak's own events (SPEC §2) as OTel log records, for a harness that
// already has an OTel pipeline. The record's event name (LogRecord.event_name,
// else an `event.name` attribute, else a string body) gives the type; its
// attributes are the event's fields under the same names. The object built
// from them goes through the same validation as POST /v1/events. Attributes
// that are not fields are never read. It claims only records with these three
// names, so its place among the sources does not matter.
//
// Encoding of the structured fields (docs/harnesses/native.md):
// - tools: an array of maps {name, schemaHash}, or two string arrays of equal
//   length, tools.names and tools.schemaHashes.
// - cacheControl, usage, diagnostics, thinking, toolChoice, params: a map, a
//   JSON string of one, or flattened attributes (cacheControl.ttl,
//   usage.input_tokens, usage.prompt_tokens_details.cached_tokens, …).
// - toolDefinitions: an array, or a JSON string of one.
// - messageHashes, systemBlockHashes: string arrays; messageBlockCounts, prefixChars: integer arrays.
// - ts, endTs: RFC 3339 or epoch ms; ts defaults to the record's time.
import { toCacheEvent } from '../../http/events.js';
import { EVENT_SCHEMAS, type EventType } from '../../http/schema.js';
import type { Attributes, AttributeValue, LogRecord } from '../records.js';
import { eventName, structured } from './attributes.js';
import { MappingError, type Source } from './source.js';

const TYPES: Readonly<Record<string, EventType>> = {
  'prompt_cache.snapshot': 'snapshot',
  'prompt_cache.usage': 'usage',
  'prompt_cache.turn': 'turn',
};

/** Fields that may come as a map, a JSON string or flattened attributes. */
const NESTED = new Set(['cacheControl', 'usage', 'diagnostics', 'thinking', 'toolChoice', 'params']);
/** Of those, the ones whose value may also be a plain string (tool_choice "auto"). */
const PLAIN_STRING = new Set(['thinking', 'toolChoice']);
/** Fields that may come as their value or as a JSON string of it. */
const JSON_TEXT = new Set(['tools', 'toolDefinitions']);

/** Each type's fields, in schema order, read once. */
const fieldsOf = (type: EventType) => Object.keys(EVENT_SCHEMAS[type].shape).filter((field) => field !== 'type');
const FIELDS: Readonly<Record<EventType, readonly string[]>> = { snapshot: fieldsOf('snapshot'), usage: fieldsOf('usage'), turn: fieldsOf('turn') };

/** `prefix.a.b = v` attributes (among `dotted`, the keys with a dot) as {a: {b: v}}; undefined when there are none. */
function unflatten(attributes: Attributes, dotted: readonly string[], prefix: string): Record<string, AttributeValue> | undefined {
  let out: Record<string, AttributeValue> | undefined;
  for (const key of dotted) {
    if (!key.startsWith(`${prefix}.`)) continue;
    const path = key.slice(prefix.length + 1).split('.');
    // Writing through "__proto__" would reach Object.prototype.
    if (path.includes('__proto__')) continue;
    out ??= {};
    let node = out;
    path.slice(0, -1).forEach((segment) => {
      const next = Object.hasOwn(node, segment) ? node[segment] : undefined;
      node = (typeof next === 'object' && next !== null && !Array.isArray(next) ? next : (node[segment] = {})) as Record<string, AttributeValue>;
    });
    node[path[path.length - 1]!] = attributes[key]!;
  }
  return out;
}

function tools(attributes: Attributes): AttributeValue | undefined {
  if (attributes.tools !== undefined) return structured(attributes, 'tools');
  const names = attributes['tools.names'];
  const hashes = attributes['tools.schemaHashes'];
  if (names === undefined && hashes === undefined) return undefined;
  if (!Array.isArray(names) || !Array.isArray(hashes) || names.length !== hashes.length) {
    throw new MappingError('tools.schemaHashes: expected a string array with one hash per name in tools.names');
  }
  return names.map((name, i) => ({ name, schemaHash: hashes[i]! }));
}

function nested(attributes: Attributes, field: string): AttributeValue | undefined {
  const value = attributes[field];
  if (PLAIN_STRING.has(field) && typeof value === 'string') {
    try {
      return JSON.parse(value) as AttributeValue;
    } catch {
      return value;
    }
  }
  return structured(attributes, field);
}

/** The SPEC §2 event that a native record's attributes describe. */
export function nativeEventJson(type: EventType, record: LogRecord): Record<string, unknown> {
  const { attributes } = record;
  const dotted: string[] = [];
  for (const key in attributes) if (key.includes('.')) dotted.push(key);
  const json: Record<string, unknown> = { type };
  for (const field of FIELDS[type]) {
    let value: unknown;
    if (field === 'tools') value = tools(attributes);
    else if (NESTED.has(field)) value = attributes[field] !== undefined ? nested(attributes, field) : dotted.length > 0 ? unflatten(attributes, dotted, field) : undefined;
    else if (JSON_TEXT.has(field)) value = structured(attributes, field);
    else value = attributes[field];
    if (value !== undefined && value !== null) json[field] = value;
  }
  if (json.ts === undefined && record.timeMs > 0) json.ts = record.timeMs;
  return json;
}

export const native: Source = {
  name: 'native',
  log(record, context) {
    const name = eventName(record);
    const type = Object.hasOwn(TYPES, name) ? TYPES[name] : undefined;
    if (type === undefined) return undefined;
    const converted = toCacheEvent(nativeEventJson(type, record), context.limits);
    if (!converted.ok) throw new MappingError(converted.error);
    return { events: [converted.event] };
  },
};
