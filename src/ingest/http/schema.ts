// SPEC §2: the ingest contract, one zod schema per event type, built for the
// configured limits. The same schemas validate requests and generate the JSON
// Schema served at GET /v1/events/schema.
import { z } from 'zod';
import { CUT_PLACES } from '../../core/types.js';
import { DEFAULT_LIMITS, type Limits } from '../limits.js';

/** RFC 3339 with a time zone, or epoch milliseconds. */
const TIMESTAMP_ERROR = 'expected RFC 3339 (e.g. 2026-11-30T10:00:00Z) or epoch milliseconds';
export const timestamp = z.union(
  [
    z.number({ error: TIMESTAMP_ERROR }).int({ error: TIMESTAMP_ERROR }).nonnegative({ error: TIMESTAMP_ERROR }).describe('epoch milliseconds'),
    z.iso.datetime({ offset: true, error: TIMESTAMP_ERROR }).describe('RFC 3339'),
  ],
  { error: TIMESTAMP_ERROR },
);

/** W3C trace context ids: 32 (trace) or 16 (span) hex digits. */
const hexId = (digits: number, name: string) =>
  z.string().regex(new RegExp(`^[0-9a-fA-F]{${digits}}$`), { error: `expected ${digits} hex digits (the ${name} id as W3C trace context writes it)` });

/** Where the request came from: not content, shown with the turn and its break. */
const originFields = {
  agentVersion: z.string().min(1).max(128).optional().describe("The agent's (harness's) version that made the request, e.g. \"2.1.32\""),
  traceId: hexId(32, 'trace').optional().describe('The trace the request belongs to in your tracer: 32 hex digits'),
  spanId: hexId(16, 'span').optional().describe("The request's span in your tracer: 16 hex digits"),
};

const tokens = z.union([z.number().int().nonnegative(), z.string().regex(/^\d+$/)]);

function buildSchemas(limits: Limits) {
  const id = z.string().min(1).max(limits.maxString);
  const hash = z.string().min(1).max(limits.maxString);
  const snapshotFields = {
    requestId: id.describe('Unique within a project; joins a snapshot to its usage'),
    sessionId: id,
    agentId: id.optional().describe('Separates subagents and side queries; default "main"'),
    ts: timestamp.describe('Request start'),
    provider: z.string().min(1).max(64).optional(),
    model: z.string().min(1).max(limits.maxString),
    systemHash: hash.optional(),
    system: z
      .union([z.string(), z.array(z.unknown())])
      .optional()
      .describe('Raw system prompt (text or blocks): hashed in memory and dropped'),
    systemBlockHashes: z.array(hash).max(1_000).optional(),
    tools: z
      .array(z.object({ name: z.string().min(1).max(limits.maxString), schemaHash: hash }))
      .max(limits.maxTools)
      .optional()
      .describe('In the order sent'),
    toolDefinitions: z
      .array(z.unknown())
      .max(limits.maxTools)
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
    messageBlockCounts: z
      .array(z.number().int().nonnegative().max(1_000_000))
      .max(100_000)
      .optional()
      .describe('Content blocks of each message (a text, a tool_use, a tool_result… each one), one per messageHashes entry: the cache lookback is counted in blocks'),
    prefixChars: z
      .array(z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER))
      .max(100_001)
      .optional()
      .describe("A size estimate of the prefix, one more entry than messageHashes: the characters of the JSON of the tools and system as sent, then the running total through each message. Never content; lets the fan-out insight count only the shared part of each request's write"),
    thinking: z.unknown().optional().describe('Extended thinking settings as sent (e.g. {"type":"enabled","budget_tokens":8000}), or thinkingHash'),
    thinkingHash: hash.optional(),
    toolChoice: z.unknown().optional().describe('tool_choice as sent, or toolChoiceHash'),
    toolChoiceHash: hash.optional(),
    params: z
      .record(z.string().min(1).max(64), z.unknown())
      .optional()
      .describe('Other cache-relevant request parameters, compared per key'),
    expectMiss: z.string().min(1).max(64).optional().describe('The harness knowingly reset the prefix, e.g. "compaction"'),
    partial: z
      .enum(CUT_PLACES)
      .optional()
      .describe('The request body was cut (a length limit): "tools" or "messages" names the list cut short, which holds its complete leading entries only; what came after the cut is left out, and only what is sent is compared'),
    continuesResponse: z
      .boolean()
      .optional()
      .describe('The request continues a conversation the provider stores (OpenAI Responses previous_response_id or conversation): its messages are only the new input, so they are not compared with the baseline\'s; model, tools, system and parameters still are'),
    ...originFields,
  };

  const usageFields = {
    usage: z.unknown().optional().describe('The provider usage object (or whole response) as the API returned it; needs provider'),
    ttftMs: z.number().nonnegative().optional().describe('Time to first token: when the request\'s cache entry became readable'),
    uncachedInputTokens: tokens.optional(),
    cacheReadInputTokens: tokens.optional(),
    cacheWriteInputTokens: tokens.optional(),
    cacheWrite1hInputTokens: tokens.optional(),
    outputTokens: tokens.optional(),
    diagnostics: z.unknown().optional().describe("Provider cache diagnostics: Anthropic's diagnostics (cache_miss_reason) or OpenAI's prompt_cache_diagnostics; left out, read from a raw response in usage"),
  };

  const snapshot = z.object({ type: z.literal('snapshot'), ...snapshotFields });

  const usage = z.object({
    type: z.literal('usage'),
    requestId: snapshotFields.requestId,
    sessionId: id.optional().describe('Optional when a snapshot carries it'),
    agentId: snapshotFields.agentId,
    ts: timestamp.optional().describe('Response end'),
    provider: snapshotFields.provider.describe('Required with a raw usage object; optional with normalised counts'),
    model: z.string().min(1).max(limits.maxString).optional(),
    ...usageFields,
    ...originFields,
  });

  const turn = z.object({
    type: z.literal('turn'),
    ...snapshotFields,
    endTs: timestamp.optional().describe('Response end'),
    ...usageFields,
  });

  return { snapshot, usage, turn };
}

export type EventSchemas = ReturnType<typeof buildSchemas>;
export type EventType = keyof EventSchemas;

const built = new WeakMap<Limits, EventSchemas>();

/** The schemas for `limits`, built once per limits object. */
export function eventSchemas(limits: Limits = DEFAULT_LIMITS): EventSchemas {
  let schemas = built.get(limits);
  if (!schemas) built.set(limits, (schemas = buildSchemas(limits)));
  return schemas;
}

/** The schemas with the default limits: the contract's fields and types. */
export const EVENT_SCHEMAS = eventSchemas();

export type SnapshotInput = z.infer<EventSchemas['snapshot']>;
export type UsageInput = z.infer<EventSchemas['usage']>;
export type TurnInput = z.infer<EventSchemas['turn']>;

/** The JSON Schema of one event, for API docs and clients. */
export function eventsJsonSchema(limits: Limits = DEFAULT_LIMITS): unknown {
  const { snapshot, usage, turn } = eventSchemas(limits);
  return z.toJSONSchema(z.discriminatedUnion('type', [snapshot, usage, turn]), { io: 'input' });
}
