// Reading helpers shared by the snapshot builders. Every failure names the
// field it is about, so an ingest rejection says exactly what was wrong.

/** A request body that cannot be read; `field` is a path into it, e.g. `tools[3].name`. */
export class SnapshotError extends Error {
  /** Where in the body, e.g. `tools[3].name`. */
  readonly field: string;

  constructor(field: string, problem: string) {
    super(`${field}: ${problem}`);
    this.name = 'SnapshotError';
    this.field = field;
  }
}

export type JsonObject = Record<string, unknown>;

export function isRecord(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function expectRecord(value: unknown, field: string): JsonObject {
  if (!isRecord(value)) throw new SnapshotError(field, 'expected an object');
  return value;
}

export function expectArray(value: unknown, field: string): unknown[] {
  if (!Array.isArray(value)) throw new SnapshotError(field, 'expected an array');
  return value;
}

/** An optional list: absent or null reads as empty. */
export function optionalArray(value: unknown, field: string): unknown[] {
  return value === undefined || value === null ? [] : expectArray(value, field);
}

export function expectString(value: unknown, field: string): string {
  if (typeof value !== 'string') throw new SnapshotError(field, 'expected a string');
  return value;
}

export interface SnapshotOptions {
  /**
   * The model the request went to. Wins over the body's own field, since
   * Gemini, Bedrock and Anthropic-on-Bedrock/Vertex name it in the URL.
   */
  model?: string;
}

export function modelOf(options: SnapshotOptions, value: unknown, field: string): string {
  const model = options.model ?? value;
  if (model === undefined) {
    throw new SnapshotError(field, 'missing; when the URL names the model, pass it as options.model');
  }
  if (typeof model !== 'string' || model === '') throw new SnapshotError(field, 'expected a non-empty string');
  return model;
}

/** The characters of a value's JSON: a size estimate of raw content. */
function jsonChars(value: unknown): number {
  return value === undefined ? 0 : (JSON.stringify(value)?.length ?? 0);
}

/**
 * SnapshotContent.prefixChars of raw content: the JSON characters of the
 * tools and system parts as sent, then the running total through each message.
 */
export function prefixChars(toolsAndSystem: readonly unknown[], messages: readonly unknown[]): number[] {
  let total = toolsAndSystem.reduce<number>((sum, part) => sum + jsonChars(part), 0);
  const sizes = [total];
  for (const message of messages) sizes.push((total += jsonChars(message)));
  return sizes;
}
