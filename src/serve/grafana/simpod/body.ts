// Reading simPod's JSON requests: the body, and a payload's values as the
// same parameter strings a query string would carry.
import type { Context } from 'hono';
import { CachebreakError } from '../../../errors.js';
import { readBody } from '../../../ingest/http/body.js';
import { refuseNulInJson } from '../../nul-bytes.js';
import type { ParamSource } from '../params.js';

export type Json = Record<string, unknown>;

/** Largest query body by default: a dashboard's queries are a few kilobytes. */
export const DEFAULT_QUERY_BODY_LIMIT = 64 * 1024;

export async function jsonBody(c: Context, limit: number): Promise<Json> {
  const raw = await readBody(c.req.raw, { limit, option: '--query-body-limit' });
  let body: unknown;
  try {
    body = JSON.parse(raw.toString('utf8'));
  } catch {
    throw new CachebreakError('invalid_body', 'the body is not JSON', 'send the JSON request the simPod datasource sends');
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new CachebreakError('invalid_body', 'the body is not a JSON object', 'send the JSON request the simPod datasource sends');
  }
  refuseNulInJson(body, '');
  return body as Json;
}

/** A payload value as parameter strings: a string, a number, or a list of them (multi-select). */
function strings(name: string, value: unknown): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return [String(value)];
  if (Array.isArray(value) && value.every((v) => typeof v === 'string' || typeof v === 'number')) return value.map(String);
  throw new CachebreakError('bad_request', `payload.${name}: expected a string, a number or a list of them`, 'e.g. "payload": {"model": ["claude-sonnet-4-5"]}');
}

/** Code-mode payloads arrive as the JSON text the user wrote; builder-mode payloads as an object. */
export function payloadOf(raw: unknown): Json {
  if (raw === undefined || raw === null || raw === '') return {};
  let value = raw;
  if (typeof raw === 'string') {
    try {
      value = JSON.parse(raw);
    } catch {
      throw new CachebreakError('bad_request', 'payload: not JSON', 'e.g. {"groupBy": "model"}');
    }
    refuseNulInJson(value, 'payload');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new CachebreakError('bad_request', 'payload: expected a JSON object', 'e.g. {"groupBy": "model"}');
  }
  return value as Json;
}

/** Parameters from the payload, over the values the request itself sets (range, interval, ad hoc filters). */
export function paramSource(payload: Json, base: Record<string, string[]>): ParamSource {
  return (name) => strings(name, payload[name]) ?? base[name];
}

/** The request's range as from/to parameters. */
export function rangeBase(body: Json): Record<string, string[]> {
  const range = body.range as { from?: unknown; to?: unknown } | undefined;
  const base: Record<string, string[]> = {};
  if (typeof range?.from === 'string') base.from = [range.from];
  if (typeof range?.to === 'string') base.to = [range.to];
  return base;
}
