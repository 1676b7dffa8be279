// Turns one decoded JSON value into a domain event, or a rejection that
// names the field and what was wrong. Raw content (system, toolDefinitions)
// is hashed here and never leaves this function.
import type { z } from 'zod';
import { unknownKeys } from './unknown-keys.js';
import { readRawSystem, readRawTools, SnapshotError } from '../../core/snapshot/index.js';
import type { CacheEvent, SnapshotContent, TurnOrigin, Usage } from '../../core/types.js';
import { normalizeReported, normalizeUsage } from '../../core/usage.js';
import { diagnosisIn, keptDiagnosis } from '../../core/diagnosis.js';
import { plainlyValid } from './plain.js';
import { DEFAULT_LIMITS, freeFormProblem, LIMIT_OPTIONS, MAX_DEPTH, nestedDeeper, type Limits } from '../limits.js';
import { timeProblem } from '../../time.js';
import { EVENT_SCHEMAS, eventSchemas, type EventType, type SnapshotInput, type TurnInput, type UsageInput } from './schema.js';

export interface Rejection {
  index: number;
  field: string;
  error: string;
}

export interface Issue {
  field: string;
  problem: string;
}

/**
 * A valid event, with the keys the contract does not know (ignored, named so a typo is seen);
 * or every problem of the event's fields at once: `error` joins `issues` ("ts: required; model: required").
 */
export type Conversion = { ok: true; event: CacheEvent; unknownKeys: string[] } | { ok: false; field: string; error: string; issues: Issue[] };

class Invalid extends Error {
  readonly field: string;
  readonly issues: Issue[];

  constructor(field: string, problem: string, more: Issue[] = []) {
    const issues = [{ field, problem }, ...more];
    super(issues.map((issue) => `${issue.field}: ${issue.problem}`).join('; '));
    this.field = field;
    this.issues = issues;
  }
}

/** Issues listed for one event; the rest are counted. */
const LISTED_ISSUES = 10;

function path(segments: readonly PropertyKey[]): string {
  return segments.reduce<string>(
    (out, s) => (typeof s === 'number' ? `${out}[${s}]` : out ? `${out}.${String(s)}` : String(s)),
    '',
  );
}

/** The option that raises the limit an over-long value ran into, when that limit is configurable. */
function limitOption(issue: z.core.$ZodIssue, limits: Limits): string {
  if (issue.code !== 'too_big') return '';
  const last = issue.path.at(-1);
  if (issue.origin === 'array' && issue.maximum === limits.maxTools && (last === 'tools' || last === 'toolDefinitions')) {
    return ` (${LIMIT_OPTIONS.maxTools})`;
  }
  return issue.origin === 'string' && issue.maximum === limits.maxString ? ` (${LIMIT_OPTIONS.maxString})` : '';
}

/** The value at `segments` inside `value`; undefined where it is missing. */
function at(value: unknown, segments: readonly PropertyKey[]): unknown {
  let current = value;
  for (const segment of segments) {
    if (typeof current !== 'object' || current === null) return undefined;
    current = (current as Record<PropertyKey, unknown>)[segment];
  }
  return current;
}

function issueOf(issue: z.core.$ZodIssue, value: unknown, limits: Limits): Issue {
  const field = path(issue.path) || 'event';
  // A missing field reads better as "required" than as "expected string, received undefined".
  const missing = issue.path.length > 0 && (issue.code === 'invalid_type' || issue.code === 'invalid_union') && at(value, issue.path) === undefined;
  return { field, problem: missing ? 'required' : issue.message.replace(/^Invalid input: /, '') + limitOption(issue, limits) };
}

/** Every problem zod found, so that one round trip fixes them all. */
function allIssues(error: z.ZodError, value: unknown, limits: Limits): Invalid {
  const issues = error.issues.slice(0, LISTED_ISSUES).map((issue) => issueOf(issue, value, limits));
  const left = error.issues.length - issues.length;
  if (left > 0) issues.push({ field: 'event', problem: `and ${left} more problem${left === 1 ? '' : 's'}` });
  const [first, ...more] = issues;
  return new Invalid(first!.field, first!.problem, more);
}

export function toMs(ts: number | string): number {
  return typeof ts === 'number' ? ts : Date.parse(ts);
}

/** A time field in epoch ms, refused outside the times events can have (no later read can render it). */
function timeOf(field: string, ts: number | string): number {
  const ms = toMs(ts);
  const problem = timeProblem(ms);
  if (problem !== undefined) throw new Invalid(field, `${problem}, got ${JSON.stringify(ts)}`);
  return ms;
}

function snapshotContent(input: SnapshotInput | TurnInput): SnapshotContent {
  const content: SnapshotContent = { model: input.model };
  if (input.system !== undefined && input.systemHash !== undefined) {
    throw new Invalid('system', 'send either system (raw, hashed here) or systemHash, not both');
  }
  if (input.tools !== undefined && input.toolDefinitions !== undefined) {
    throw new Invalid('toolDefinitions', 'send either toolDefinitions (raw, hashed here) or tools, not both');
  }
  if (input.cacheControl !== undefined && input.cacheControlHash !== undefined) {
    throw new Invalid('cacheControlHash', 'send either cacheControl or cacheControlHash, not both');
  }
  // Markers on raw tool definitions and system blocks are markers of those positions (SPEC §4.6).
  const rawMarkers: string[] = [];
  try {
    if (input.system !== undefined) {
      const { markers, ...hashes } = readRawSystem(input.system);
      Object.assign(content, hashes);
      rawMarkers.push(...markers);
    }
    if (input.toolDefinitions !== undefined) {
      const { tools, markers } = readRawTools(input.toolDefinitions);
      content.tools = tools;
      rawMarkers.push(...markers);
    }
  } catch (error) {
    if (error instanceof SnapshotError) throw new Invalid(error.field, error.message.replace(/^[^:]*: /, ''));
    throw error;
  }
  if (input.systemHash !== undefined) content.systemHash = input.systemHash;
  if (input.systemBlockHashes !== undefined) content.systemBlockHashes = input.systemBlockHashes;
  if (input.tools !== undefined) content.tools = input.tools;
  if (input.cacheControl !== undefined) content.cacheControl = input.cacheControl;
  if (rawMarkers.length > 0) {
    const control = content.cacheControl ?? { enabled: true };
    content.cacheControl = { ...control, markers: [...rawMarkers, ...(control.markers ?? [])] };
  }
  if (input.cacheControlHash !== undefined) content.cacheControlHash = input.cacheControlHash;
  if (input.messageHashes !== undefined) content.messageHashes = input.messageHashes;
  if (input.messageBlockCounts !== undefined) {
    const hashes = input.messageHashes?.length;
    if (hashes !== input.messageBlockCounts.length) {
      throw new Invalid('messageBlockCounts', `expected one count per messageHashes entry (${hashes ?? 'no messageHashes sent'}), got ${input.messageBlockCounts.length}`);
    }
    content.messageBlockCounts = input.messageBlockCounts;
  }
  if (input.prefixChars !== undefined) {
    const hashes = input.messageHashes?.length ?? 0;
    if (input.prefixChars.length !== hashes + 1) {
      throw new Invalid('prefixChars', `expected one size for tools and system, then one per messageHashes entry (${hashes + 1}), got ${input.prefixChars.length}`);
    }
    if (input.prefixChars.some((n, i) => i > 0 && n < input.prefixChars![i - 1]!)) {
      throw new Invalid('prefixChars', 'expected running totals: each entry at least the one before');
    }
    content.prefixChars = input.prefixChars;
  }
  if (input.thinking !== undefined && input.thinkingHash !== undefined) {
    throw new Invalid('thinkingHash', 'send either thinking or thinkingHash, not both');
  }
  if (input.toolChoice !== undefined && input.toolChoiceHash !== undefined) {
    throw new Invalid('toolChoiceHash', 'send either toolChoice or toolChoiceHash, not both');
  }
  if (input.thinking !== undefined) content.thinking = input.thinking;
  if (input.thinkingHash !== undefined) content.thinkingHash = input.thinkingHash;
  if (input.toolChoice !== undefined) content.toolChoice = input.toolChoice;
  if (input.toolChoiceHash !== undefined) content.toolChoiceHash = input.toolChoiceHash;
  if (input.params !== undefined) content.params = input.params;
  if (input.partial !== undefined) content.partial = input.partial;
  if (input.continuesResponse === true) content.continuesResponse = true;
  return content;
}

/** The origin an event names (ids in lowercase, as W3C trace context writes them). */
function originOf(input: Pick<SnapshotInput, 'agentVersion' | 'traceId' | 'spanId'>): TurnOrigin {
  const origin: TurnOrigin = {};
  if (input.agentVersion !== undefined) origin.agentVersion = input.agentVersion;
  if (input.traceId !== undefined) origin.traceId = input.traceId.toLowerCase();
  if (input.spanId !== undefined) origin.spanId = input.spanId.toLowerCase();
  return origin;
}

const NORMALISED = ['uncachedInputTokens', 'cacheReadInputTokens', 'cacheWriteInputTokens', 'cacheWrite1hInputTokens', 'outputTokens'] as const;

function usageOf(input: UsageInput | TurnInput): Usage {
  const normalised = NORMALISED.filter((key) => input[key] !== undefined);
  if (input.usage !== undefined && normalised.length > 0) {
    throw new Invalid(normalised[0]!, 'send either usage (as the provider returned it) or the normalised token fields, not both');
  }
  if (input.usage === undefined && normalised.length === 0) {
    throw new Invalid('usage', 'required: the provider usage object, or uncachedInputTokens/cacheReadInputTokens/cacheWriteInputTokens');
  }
  if (input.usage !== undefined && input.provider === undefined) {
    throw new Invalid('provider', 'required with a raw usage object (e.g. "anthropic", "openai"); with normalised token fields it may be left out');
  }
  const result = input.usage !== undefined ? normalizeUsage(input.provider!, input.usage) : normalizeReported(input);
  if (!result.ok) {
    const field = input.usage !== undefined && !result.field.startsWith('usage') ? `usage.${result.field}` : result.field;
    throw new Invalid(field, result.error.replace(/^[^:]*: /, ''));
  }
  return result.usage;
}

/** The provider's cache diagnosis, sent in `diagnostics` or carried by the raw response in `usage`: its reason and counts only (diagnosis.ts). */
function diagnosticsOf(input: UsageInput | TurnInput, limits: Limits): unknown {
  if (input.diagnostics !== undefined) {
    const problem = freeFormProblem(input.diagnostics, limits);
    if (problem !== undefined) throw new Invalid('diagnostics', problem);
    return keptDiagnosis(input.diagnostics);
  }
  return input.usage === undefined ? undefined : diagnosisIn(input.usage);
}

/** The event as its schema reads it: straight through when plainly valid, else through zod. */
function validated<T>(type: EventType, value: Record<string, unknown>, limits: Limits): T {
  if (plainlyValid(type, value, limits)) return value as T;
  const parsed = eventSchemas(limits)[type].safeParse(value);
  if (!parsed.success) throw allIssues(parsed.error, value, limits);
  return parsed.data as T;
}

/** Fields that hold free-form JSON, walked when hashed or stored. */
const FREE_FORM = ['usage', 'diagnostics', 'system', 'toolDefinitions', 'thinking', 'toolChoice', 'params'] as const;

function convert(value: unknown, limits: Limits): CacheEvent {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new Invalid('event', 'expected a JSON object');
  }
  for (const field of FREE_FORM) {
    if (nestedDeeper((value as Record<string, unknown>)[field])) throw new Invalid(field, `nested more than ${MAX_DEPTH} levels deep`);
  }
  const type = (value as { type?: unknown }).type;
  if (type === undefined) throw new Invalid('type', 'required: one of snapshot, usage, turn');
  if (typeof type !== 'string' || !Object.hasOwn(EVENT_SCHEMAS, type)) {
    throw new Invalid('type', `expected one of snapshot, usage, turn, got ${JSON.stringify(type).slice(0, 40)}`);
  }
  switch (type) {
    case 'snapshot': {
      const input = validated<SnapshotInput>('snapshot', value as Record<string, unknown>, limits);
      return {
        type: 'snapshot',
        requestId: input.requestId,
        sessionId: input.sessionId,
        agentId: input.agentId ?? 'main',
        ts: timeOf('ts', input.ts),
        ...(input.provider !== undefined ? { provider: input.provider } : {}),
        ...(input.expectMiss !== undefined ? { expectMiss: input.expectMiss } : {}),
        ...originOf(input),
        ...snapshotContent(input),
      };
    }
    case 'usage': {
      const input = validated<UsageInput>('usage', value as Record<string, unknown>, limits);
      const event: CacheEvent = { type: 'usage', requestId: input.requestId, usage: usageOf(input) };
      if (input.provider !== undefined) event.provider = input.provider;
      if (input.ttftMs !== undefined) event.ttftMs = input.ttftMs;
      if (input.sessionId !== undefined) event.sessionId = input.sessionId;
      if (input.agentId !== undefined) event.agentId = input.agentId;
      if (input.ts !== undefined) event.ts = timeOf('ts', input.ts);
      if (input.model !== undefined) event.model = input.model;
      const diagnostics = diagnosticsOf(input, limits);
      if (diagnostics !== undefined) event.diagnostics = diagnostics;
      return Object.assign(event, originOf(input));
    }
    default: {
      const input = validated<TurnInput>('turn', value as Record<string, unknown>, limits);
      const diagnostics = diagnosticsOf(input, limits);
      return {
        type: 'turn',
        requestId: input.requestId,
        sessionId: input.sessionId,
        agentId: input.agentId ?? 'main',
        ts: timeOf('ts', input.ts),
        ...(input.provider !== undefined ? { provider: input.provider } : {}),
        usage: usageOf(input),
        ...(input.endTs !== undefined ? { endTs: timeOf('endTs', input.endTs) } : {}),
        ...(input.ttftMs !== undefined ? { ttftMs: input.ttftMs } : {}),
        ...(input.expectMiss !== undefined ? { expectMiss: input.expectMiss } : {}),
        ...(diagnostics !== undefined ? { diagnostics } : {}),
        ...originOf(input),
        ...snapshotContent(input),
      };
    }
  }
}

export function toCacheEvent(value: unknown, limits: Limits = DEFAULT_LIMITS): Conversion {
  try {
    const event = convert(value, limits);
    const type = (value as { type: EventType }).type;
    return { ok: true, event, unknownKeys: unknownKeys(EVENT_SCHEMAS[type], value) };
  } catch (error) {
    if (error instanceof Invalid) return { ok: false, field: error.field, error: error.message, issues: error.issues };
    throw error;
  }
}
