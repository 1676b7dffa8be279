// Loads the raw request-body fixtures and helps tests read what a snapshot kept.
import { readFileSync } from 'node:fs';
import { buildSnapshot, type RequestApi, type SnapshotOptions } from '../../src/core/snapshot/index.js';
import type { SnapshotContent } from '../../src/core/types.js';

// Fixtures are edited freely in tests, at any depth.
export type Body = Record<string, any>;

export const REQUEST_FIXTURES = ['claude-code', 'openai-chat', 'openai-responses', 'gemini', 'bedrock-converse'] as const;

export function loadRequest(name: (typeof REQUEST_FIXTURES)[number]): Body {
  return JSON.parse(readFileSync(new URL(`../fixtures/requests/${name}.json`, import.meta.url), 'utf8')) as Body;
}

/** A snapshot that must build. */
export function snapshotOf(body: unknown, api?: RequestApi, options?: SnapshotOptions): SnapshotContent {
  const result = buildSnapshot(body, api, options);
  if (!result.ok) throw new Error(`expected a snapshot, got ${result.error}`);
  return result.snapshot;
}

/** Keys whose values are names or settings that a snapshot may legitimately show. */
const NOT_CONTENT = new Set(['model', 'modelId', 'name', 'type', 'role', 'ttl', 'mode', 'server_label']);

/** Every string in a body that carries prompt content (text, descriptions, ids, keys). */
export function contentStrings(value: unknown, key?: string): string[] {
  if (typeof value === 'string') return key !== undefined && NOT_CONTENT.has(key) ? [] : [value];
  if (Array.isArray(value)) return value.flatMap((item) => contentStrings(item, key));
  if (typeof value !== 'object' || value === null) return [];
  return Object.entries(value).flatMap(([k, v]) => contentStrings(v, k));
}

/**
 * The snapshot without its cache settings and its size estimate (the JSON as
 * sent, markers included): what a cache_control-only change must leave alone.
 */
export function contentOf(snapshot: SnapshotContent): Omit<SnapshotContent, 'cacheControl' | 'prefixChars'> {
  const { cacheControl: _, prefixChars: _sizes, ...content } = snapshot;
  return content;
}
