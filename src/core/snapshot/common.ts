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
