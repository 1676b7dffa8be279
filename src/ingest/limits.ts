// How much one request may carry: each limit has a default here, an option in
// config.ts, and an error that names the option.

export interface Limits {
  /** Events (or OTLP records) in one request. */
  maxEvents: number;
  /** Characters of an id, name, hash or model. */
  maxString: number;
  /** Tools in one snapshot (`tools` or `toolDefinitions`). */
  maxTools: number;
  /** Attributes of one OTLP log record, span or data point. */
  maxAttributes: number;
}

export const DEFAULT_LIMITS: Limits = Object.freeze({
  maxEvents: 10_000,
  maxString: 256,
  maxTools: 2_000,
  maxAttributes: 256,
});

/** The option that raises each limit, for error messages. */
export const LIMIT_OPTIONS: Record<keyof Limits, string> = {
  maxEvents: '--max-events',
  maxString: '--max-string',
  maxTools: '--max-tools',
  maxAttributes: '--max-attributes',
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
