// Splits a /v1/events body into values: JSON ({"events": […]} or an array)
// or NDJSON (one value per line, a bad line rejected on its own).
import { CachebreakError } from '../../errors.js';
import { jsonProblem } from '../json-problem.js';

export const JSON_TYPES = new Set(['application/json']);
export const NDJSON_TYPES = new Set(['application/x-ndjson', 'application/jsonl', 'application/json-lines', 'application/ndjson']);

export interface DecodedValue {
  ok: true;
  value: unknown;
}
export interface UndecodableLine {
  ok: false;
  error: string;
}

function notJson(detail: string): CachebreakError {
  return new CachebreakError(
    'invalid_body',
    `body is not JSON: ${detail}`,
    'send {"events": [...]} or an array of events as application/json, or one event per line as application/x-ndjson',
  );
}

export function decodeJson(text: string): (DecodedValue | UndecodableLine)[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw notJson(jsonProblem(error));
  }
  const events = Array.isArray(parsed) ? parsed : (parsed as { events?: unknown } | null)?.events;
  if (!Array.isArray(events)) {
    throw new CachebreakError(
      'invalid_body',
      'expected {"events": [...]} or an array of events',
      'wrap events in {"events": [...]}, or send them one per line as application/x-ndjson',
    );
  }
  return events.map((value) => ({ ok: true, value }));
}

export function decodeNdjson(text: string): (DecodedValue | UndecodableLine)[] {
  const out: (DecodedValue | UndecodableLine)[] = [];
  const lines = text.split('\n');
  lines.forEach((line, i) => {
    if (line.trim() === '') return;
    try {
      out.push({ ok: true, value: JSON.parse(line) });
    } catch (error) {
      out.push({ ok: false, error: `line ${i + 1}: not valid JSON (${jsonProblem(error)})` });
    }
  });
  if (out.length > 0 && out.every((v) => !v.ok)) throw notJson('no line of the NDJSON body is valid JSON');
  return out;
}

export function decodeEvents(body: Buffer, type: string): (DecodedValue | UndecodableLine)[] {
  let text = body.toString('utf8');
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  return NDJSON_TYPES.has(type) ? decodeNdjson(text) : decodeJson(text);
}
