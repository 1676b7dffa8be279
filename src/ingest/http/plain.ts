// A fast path for the common case: an event that is plainly well formed
// skips zod's full parse (which copies every event, ~10 µs). It is
// conservative: it accepts only shapes the zod schema certainly accepts, with
// nested objects holding exactly the declared keys; anything else goes to zod,
// which stays the one authority for what is valid and for every error message.
// A property test proves that whatever this accepts, zod accepts identically.
import { DEFAULT_LIMITS, type Limits } from '../limits.js';
import type { EventType } from './schema.js';
import { timestamp } from './schema.js';

type Json = Record<string, unknown>;

const isString = (v: unknown, max: number): boolean => typeof v === 'string' && v.length >= 1 && v.length <= max;
const optionalString = (v: unknown, max: number): boolean => v === undefined || isString(v, max);

function isTimestamp(v: unknown): boolean {
  if (typeof v === 'number') return Number.isSafeInteger(v) && v >= 0;
  return typeof v === 'string' && timestamp.safeParse(v).success;
}

function isTokens(v: unknown): boolean {
  return v === undefined || (typeof v === 'number' ? Number.isSafeInteger(v) && v >= 0 : typeof v === 'string' && /^\d+$/.test(v));
}

function stringArray(v: unknown, maxItems: number, maxLength: number): boolean {
  if (v === undefined) return true;
  if (!Array.isArray(v) || v.length > maxItems) return false;
  for (const item of v) if (!isString(item, maxLength)) return false;
  return true;
}

function countArray(v: unknown, maxItems: number, maxCount = 1_000_000): boolean {
  if (v === undefined) return true;
  if (!Array.isArray(v) || v.length > maxItems) return false;
  for (const item of v) if (!(Number.isSafeInteger(item) && item >= 0 && item <= maxCount)) return false;
  return true;
}

function isTools(v: unknown, limits: Limits): boolean {
  if (v === undefined) return true;
  if (!Array.isArray(v) || v.length > limits.maxTools) return false;
  for (const tool of v) {
    if (typeof tool !== 'object' || tool === null || Array.isArray(tool)) return false;
    const t = tool as Json;
    if (Object.keys(t).length !== 2 || !isString(t.name, limits.maxString) || !isString(t.schemaHash, limits.maxString)) return false;
  }
  return true;
}

const CACHE_CONTROL_KEYS = new Set(['enabled', 'ttl', 'scope', 'markers', 'key']);

function isCacheControl(v: unknown): boolean {
  if (v === undefined) return true;
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const c = v as Json;
  for (const key of Object.keys(c)) if (!CACHE_CONTROL_KEYS.has(key)) return false;
  if (c.enabled !== undefined && typeof c.enabled !== 'boolean') return false;
  if (c.ttl !== undefined && !(typeof c.ttl === 'string' && c.ttl.length <= 32)) return false;
  if (c.scope !== undefined && !(typeof c.scope === 'string' && c.scope.length <= 128)) return false;
  if (c.key !== undefined && !(typeof c.key === 'string' && c.key.length <= 256)) return false;
  if (c.markers !== undefined) {
    if (!Array.isArray(c.markers) || c.markers.length > 64) return false;
    for (const marker of c.markers) if (!(typeof marker === 'string' && marker.length <= 256)) return false;
  }
  return true;
}

const HEX = /^[0-9a-fA-F]+$/;

function optionalHex(v: unknown, digits: number): boolean {
  return v === undefined || (typeof v === 'string' && v.length === digits && HEX.test(v));
}

function originPlain(e: Json): boolean {
  return optionalString(e.agentVersion, 128) && optionalHex(e.traceId, 32) && optionalHex(e.spanId, 16);
}

function snapshotPlain(e: Json, limits: Limits): boolean {
  const max = limits.maxString;
  return (
    isString(e.sessionId, max) &&
    optionalString(e.agentId, max) &&
    isTimestamp(e.ts) &&
    originPlain(e) &&
    isString(e.model, max) &&
    optionalString(e.systemHash, max) &&
    stringArray(e.systemBlockHashes, 1_000, max) &&
    isTools(e.tools, limits) &&
    isCacheControl(e.cacheControl) &&
    optionalString(e.cacheControlHash, max) &&
    stringArray(e.messageHashes, 100_000, max) &&
    countArray(e.messageBlockCounts, 100_000) &&
    countArray(e.prefixChars, 100_001, Number.MAX_SAFE_INTEGER) &&
    optionalString(e.expectMiss, 64) &&
    optionalString(e.thinkingHash, max) &&
    optionalString(e.toolChoiceHash, max) &&
    // Raw content and parameters are rare and need zod's detail.
    e.system === undefined &&
    e.toolDefinitions === undefined &&
    e.thinking === undefined &&
    e.toolChoice === undefined &&
    e.params === undefined &&
    e.partial === undefined &&
    e.continuesResponse === undefined
  );
}

function usagePlain(e: Json): boolean {
  return (
    optionalString(e.provider, 64) &&
    (e.ttftMs === undefined || (typeof e.ttftMs === 'number' && Number.isFinite(e.ttftMs) && e.ttftMs >= 0)) &&
    isTokens(e.uncachedInputTokens) &&
    isTokens(e.cacheReadInputTokens) &&
    isTokens(e.cacheWriteInputTokens) &&
    isTokens(e.cacheWrite1hInputTokens) &&
    isTokens(e.outputTokens)
  );
}

/** True only when the zod schema of `type` (for `limits`) certainly accepts `e` and would return it unchanged. */
export function plainlyValid(type: EventType, e: Json, limits: Limits = DEFAULT_LIMITS): boolean {
  const max = limits.maxString;
  if (!isString(e.requestId, max)) return false;
  switch (type) {
    case 'snapshot':
      return snapshotPlain(e, limits) && optionalString(e.provider, 64);
    case 'usage':
      return (
        usagePlain(e) &&
        originPlain(e) &&
        optionalString(e.sessionId, max) &&
        optionalString(e.agentId, max) &&
        (e.ts === undefined || isTimestamp(e.ts)) &&
        optionalString(e.model, max)
      );
    case 'turn':
      return snapshotPlain(e, limits) && usagePlain(e) && (e.endTs === undefined || isTimestamp(e.endTs));
  }
}
