// How much one request may carry: each limit has a default here, an option in
// config.ts, and an error that names the option. `eventProblem` holds every
// event to them, whichever way it came in and whatever it was built from.
import type { CacheEvent } from '../core/types.js';

export interface Limits {
  /** Events (or OTLP records) in one request. */
  maxEvents: number;
  /** Characters of an id, name, hash or model. */
  maxString: number;
  /** Tools in one snapshot (`tools` or `toolDefinitions`). */
  maxTools: number;
  /** Attributes of one OTLP log record, span or data point. */
  maxAttributes: number;
  /** Characters of JSON of one stored free-form field (diagnostics, params, thinking, toolChoice). */
  maxJson: number;
}

export const DEFAULT_LIMITS: Limits = Object.freeze({
  maxEvents: 10_000,
  maxString: 256,
  maxTools: 2_000,
  maxAttributes: 256,
  maxJson: 16_384,
});

/** The option that raises each limit, for error messages. */
export const LIMIT_OPTIONS: Record<keyof Limits, string> = {
  maxEvents: '--max-events',
  maxString: '--max-string',
  maxTools: '--max-tools',
  maxAttributes: '--max-attributes',
  maxJson: '--max-json',
};

/** Nesting levels a free-form value (raw usage, diagnostics, parameters, raw content) may have. */
export const MAX_DEPTH = 64;

/** Whether `value` nests deeper than `maxDepth` levels of objects and arrays (walked without recursion). */
export function nestedDeeper(value: unknown, maxDepth = MAX_DEPTH): boolean {
  let level: unknown[] = [value];
  for (let depth = 0; level.length > 0; depth++) {
    const next: unknown[] = [];
    for (const item of level) {
      if (typeof item !== 'object' || item === null) continue;
      if (depth >= maxDepth) return true;
      for (const child of Array.isArray(item) ? item : Object.values(item)) next.push(child);
    }
    level = next;
  }
  return false;
}

/** Free-form fields that are stored as sent. Raw content (system, toolDefinitions, usage) is hashed or read and dropped; diagnostics are reduced to their reason and counts. */
const STORED_JSON = ['params', 'thinking', 'toolChoice'] as const;

const IDS = ['requestId', 'sessionId', 'agentId', 'model'] as const;

/** Stored as text, which in PostgreSQL cannot hold a NUL byte: refused on both stores alike. */
const TEXTS = [...IDS, 'provider'] as const;

/**
 * Why `event` exceeds `limits`, or undefined: ids, names and tools within
 * --max-string and --max-tools also when they were read from raw tool
 * definitions, OTLP attributes or a tailed line, ids and the provider
 * without a NUL byte, and stored free-form JSON within MAX_DEPTH and --max-json.
 */
export function eventProblem(event: CacheEvent, limits: Limits): { field: string; problem: string } | undefined {
  const tooLong = `longer than ${limits.maxString} characters (${LIMIT_OPTIONS.maxString})`;
  const fields = event as Partial<Record<(typeof TEXTS)[number] | (typeof STORED_JSON)[number], unknown>>;
  for (const field of IDS) {
    const value = fields[field];
    if (typeof value === 'string' && value.length > limits.maxString) return { field, problem: tooLong };
  }
  for (const field of TEXTS) {
    const value = fields[field];
    if (typeof value === 'string' && value.includes('\0')) return { field, problem: 'contains a NUL byte (\\u0000), which no stored value holds; remove it' };
  }
  if (event.type !== 'usage' && event.tools) {
    const { tools } = event;
    if (tools.length > limits.maxTools) return { field: 'tools', problem: `${tools.length} tools; the limit is ${limits.maxTools} (${LIMIT_OPTIONS.maxTools})` };
    const long = tools.findIndex((tool) => tool.name.length > limits.maxString || tool.schemaHash.length > limits.maxString);
    if (long >= 0) return { field: `tools[${long}]`, problem: `name or schemaHash ${tooLong}` };
  }
  for (const field of STORED_JSON) {
    const value = fields[field];
    if (value === undefined) continue;
    const problem = freeFormProblem(value, limits);
    if (problem !== undefined) return { field, problem };
  }
  return undefined;
}

/** Why a free-form value sent with an event is refused: nested past MAX_DEPTH, or over --max-json. */
export function freeFormProblem(value: unknown, limits: Limits): string | undefined {
  if (nestedDeeper(value)) return `nested more than ${MAX_DEPTH} levels deep`;
  const size = JSON.stringify(value).length;
  return size > limits.maxJson ? `${size} characters of JSON; the limit is ${limits.maxJson} (${LIMIT_OPTIONS.maxJson})` : undefined;
}
