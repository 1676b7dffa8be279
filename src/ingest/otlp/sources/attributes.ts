// Reading single attributes of a record. Each source reads only the keys it
// knows, never a whole attribute set: several harnesses put prompt text in
// attributes (and Gemini CLI its command line in the resource). Errors name
// the attribute and echo only numbers.
import type { AttributeValue, Attributes, LogRecord, Origin } from '../records.js';
import { MappingError } from './source.js';

function describe(value: AttributeValue): string {
  if (typeof value === 'string') return /^-?\d+(\.\d+)?$/.test(value) ? `"${value}"` : 'a non-numeric string';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' && value !== null ? 'a map' : String(value);
}

/** A non-empty string (numbers too: some exporters send ids as numbers); undefined when absent or empty. */
export function text(attributes: Attributes, key: string): string | undefined {
  const value = attributes[key];
  if (typeof value === 'string') return value === '' ? undefined : value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return undefined;
}

/** The first of `keys` that holds a non-empty string. */
export function firstText(attributes: Attributes, keys: readonly string[]): string | undefined {
  for (const key of keys) {
    const value = text(attributes, key);
    if (value !== undefined) return value;
  }
  return undefined;
}

/** A token count: a non-negative integer, or its decimal string (Claude Code 2.1.88 sends strings). */
export function count(attributes: Attributes, key: string): number | undefined {
  const value = attributes[key];
  if (value === undefined || value === null) return undefined;
  const n = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value;
  if (typeof n === 'number' && Number.isSafeInteger(n) && n >= 0) return n + 0;
  throw new MappingError(`${key}: expected a non-negative integer, got ${describe(value)}`);
}

/** The first of `keys` that holds a count. */
export function firstCount(attributes: Attributes, keys: readonly string[]): number | undefined {
  for (const key of keys) {
    const value = count(attributes, key);
    if (value !== undefined) return value;
  }
  return undefined;
}

/** A duration in ms: only shifts a request's start, so anything but a non-negative number reads as unknown. */
export function millis(attributes: Attributes, key: string): number | undefined {
  const value = attributes[key];
  const n = typeof value === 'string' ? Number(value) : value;
  return typeof n === 'number' && Number.isFinite(n) && n >= 0 ? n : undefined;
}

/** A structured attribute, or a JSON string of one (GenAI content attributes come either way). */
export function structured(attributes: Attributes, key: string): AttributeValue | undefined {
  const value = attributes[key];
  if (typeof value !== 'string') return value ?? undefined;
  try {
    return JSON.parse(value) as AttributeValue;
  } catch {
    throw new MappingError(`${key}: expected JSON, got a string that does not parse`);
  }
}

const DOTTED = /^[A-Za-z][\w-]*(\.[\w-]+)+$/;

/**
 * The record's event name, prefixed by its source. Claude Code puts the full
 * name in the body (`claude_code.api_request`) and only `api_request` in
 * `event.name`; Qwen Code and Gemini CLI the full name in `event.name` and
 * prose in the body.
 */
export function eventName(record: LogRecord): string {
  const attribute = record.attributes['event.name'];
  for (const candidate of [record.eventName, attribute, record.body]) {
    if (typeof candidate === 'string' && DOTTED.test(candidate)) return candidate;
  }
  if (record.eventName !== '') return record.eventName;
  return typeof attribute === 'string' ? attribute : '';
}

/** The harness that sent a record. Of a resource, only this and session.id are ever read. */
export function serviceName(origin: Origin): string | undefined {
  const value = origin.resource['service.name'];
  return typeof value === 'string' ? value : undefined;
}

/** session.id on the record, else on the resource (Gemini CLI sets both). */
export function sessionIdOf(origin: Origin, attributes: Attributes): string | undefined {
  return text(attributes, 'session.id') ?? text(origin.resource, 'session.id');
}

export function requireSession(origin: Origin, attributes: Attributes): string {
  const sessionId = sessionIdOf(origin, attributes);
  if (sessionId === undefined) throw new MappingError('session.id: required to place the call in a session');
  return sessionId;
}

/** `event.timestamp` (ISO 8601, set when the event happened), else the record's own time. */
export function eventTime(record: LogRecord): number {
  const stamp = record.attributes['event.timestamp'];
  const parsed = typeof stamp === 'string' ? Date.parse(stamp) : NaN;
  return Math.floor(Number.isFinite(parsed) ? parsed : record.timeMs);
}
