// SPEC §2 events as native-source log records (prompt_cache.<type>). Free of
// vitest, so that scripts (npm run crash) can use it; harness.ts re-exports it.
import type { AnyValue, AnyValueMap } from '@opentelemetry/api-logs';

export interface NativeRecord {
  eventName: string;
  attributes: AnyValueMap;
}

function anyValue(value: unknown): AnyValue {
  if (Array.isArray(value)) return value.map(anyValue);
  if (typeof value === 'object' && value !== null) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, anyValue(v)]));
  return value as AnyValue;
}

/** A SPEC §2 event as a native log record: event name prompt_cache.<type>, every other field an attribute of its name. */
export function nativeRecord(event: Record<string, unknown>): NativeRecord {
  const { type, ...fields } = event;
  return { eventName: `prompt_cache.${String(type)}`, attributes: anyValue(fields) as AnyValueMap };
}
