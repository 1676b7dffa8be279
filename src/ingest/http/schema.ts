// SPEC §2: the ingest contract, one zod schema per event type. The same
// schemas validate requests and generate the JSON Schema served at
// GET /v1/events/schema.
import { z } from 'zod';

const id = z.string().min(1).max(256);
const hash = z.string().min(1).max(256);

/** RFC 3339 with a time zone, or epoch milliseconds. */
const TIMESTAMP_ERROR = 'expected RFC 3339 (e.g. 2026-11-30T10:00:00Z) or epoch milliseconds';
export const timestamp = z.union(
  [
    z.number({ error: TIMESTAMP_ERROR }).int({ error: TIMESTAMP_ERROR }).nonnegative({ error: TIMESTAMP_ERROR }).describe('epoch milliseconds'),
    z.iso.datetime({ offset: true, error: TIMESTAMP_ERROR }).describe('RFC 3339'),
  ],
  { error: TIMESTAMP_ERROR },
);

const tokens = z.union([z.number().int().nonnegative(), z.string().regex(/^\d+$/)]);

const snapshotFields = {
  requestId: id.describe('Unique within a project; joins a snapshot to its usage'),
  sessionId: id,
  agentId: id.optional().describe('Separates subagents and side queries; default "main"'),
  ts: timestamp.describe('Request start'),
  provider: z.string().min(1).max(64).optional(),
  model: z.string().min(1).max(256),
  systemHash: hash.optional(),
  system: z
    .union([z.string(), z.array(z.unknown())])
    .optional()
    .describe('Raw system prompt (text or blocks): hashed in memory and dropped'),
  systemBlockHashes: z.array(hash).max(1_000).optional(),
  tools: z
    .array(z.object({ name: z.string().min(1).max(256), schemaHash: hash }))
    .max(2_000)
    .optional()
    .describe('In the order sent'),
  toolDefinitions: z
    .array(z.unknown())
    .max(2_000)
    .optional()
    .describe('Raw tool objects as sent: hashed in memory and dropped'),
  cacheControl: z
    .object({
      enabled: z.boolean().optional(),
      ttl: z.string().max(32).optional(),
      scope: z.string().max(128).optional(),
      markers: z.array(z.string().max(256)).max(64).optional(),
      key: z.string().max(256).optional(),
    })
    .optional(),
  cacheControlHash: hash.optional(),
  messageHashes: z.array(hash).max(100_000).optional(),
  expectMiss: z.string().min(1).max(64).optional().describe('The harness knowingly reset the prefix, e.g. "compaction"'),
};

const usageFields = {
  usage: z.unknown().optional().describe('The provider usage object (or whole response) as the API returned it'),
  uncachedInputTokens: tokens.optional(),
  cacheReadInputTokens: tokens.optional(),
  cacheWriteInputTokens: tokens.optional(),
  cacheWrite1hInputTokens: tokens.optional(),
  outputTokens: tokens.optional(),
  diagnostics: z.unknown().optional().describe("Provider cache diagnostics, e.g. Anthropic's cache_miss_reason"),
};

export const snapshotEvent = z.object({ type: z.literal('snapshot'), ...snapshotFields });

export const usageEvent = z.object({
  type: z.literal('usage'),
  requestId: snapshotFields.requestId,
  sessionId: id.optional().describe('Optional when a snapshot carries it'),
  agentId: snapshotFields.agentId,
  ts: timestamp.optional().describe('Response end'),
  provider: z.string().min(1).max(64),
  model: z.string().min(1).max(256).optional(),
  ...usageFields,
});

export const turnEvent = z.object({
  type: z.literal('turn'),
  ...snapshotFields,
  provider: z.string().min(1).max(64),
  endTs: timestamp.optional().describe('Response end'),
  ...usageFields,
});

export const EVENT_SCHEMAS = { snapshot: snapshotEvent, usage: usageEvent, turn: turnEvent } as const;
export type EventType = keyof typeof EVENT_SCHEMAS;

export type SnapshotInput = z.infer<typeof snapshotEvent>;
export type UsageInput = z.infer<typeof usageEvent>;
export type TurnInput = z.infer<typeof turnEvent>;

/** The JSON Schema of one event, for API docs and clients. */
export function eventsJsonSchema(): unknown {
  return z.toJSONSchema(z.discriminatedUnion('type', [snapshotEvent, usageEvent, turnEvent]), { io: 'input' });
}
