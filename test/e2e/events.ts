// Realistic ingest events as a harness would POST them (SPEC §2), shared by
// the end-to-end tests and by make-fixture-db.ts.
import { createHash } from 'node:crypto';
import { breakFingerprint } from '../../src/core/fingerprint.js';
import type { BreakRecord } from '../../src/core/types.js';

export type WireEvent = Record<string, unknown>;

export const T0 = Date.parse('2026-11-30T10:00:00.000Z');
const SECOND = 1000;
export const iso = (ms: number) => new Date(ms).toISOString();

/** Stands in for a client-side hash: opaque, only compared for equality (SPEC §7). */
export const opaqueHash = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 16);

export const SEED_TOOLS = ['read_file', 'shell', 'mcp__filesystem__read_tree', 'mcp__github__search_issues'];
/** The seed's MCP re-order: the two MCP servers answered discovery in the other order. */
export const REORDERED_TOOLS = ['read_file', 'shell', 'mcp__github__search_issues', 'mcp__filesystem__read_tree'];

export const toolRefs = (names: readonly string[]) => names.map((name) => ({ name, schemaHash: opaqueHash(`tool:${name}`) }));

/** Anthropic Messages usage, as the API returns it (input_tokens excludes the cache). */
export function anthropicUsage(read: number, write: number, uncached = 120, output = 310) {
  return {
    input_tokens: uncached,
    cache_creation_input_tokens: write,
    cache_read_input_tokens: read,
    cache_creation: { ephemeral_5m_input_tokens: write, ephemeral_1h_input_tokens: 0 },
    output_tokens: output,
    service_tier: 'standard',
  };
}

export interface Step {
  requestId: string;
  /** Seconds after T0 that the request started; the response ends 2 s later. */
  at: number;
  agentId?: string;
  tools?: readonly string[];
  systemBlocks?: readonly string[];
  /** Number of messages in the prefix; `rewrite` changes the first one (compaction, pruning). */
  messages?: number;
  rewrite?: boolean;
  read: number;
  write: number;
  expectMiss?: string;
}

const BASE_SYSTEM = ['x-anthropic-billing-header: cc_version=2.0.50', 'You are Claude Code, an interactive CLI tool.'];

/**
 * One Claude Code request as two events: the snapshot (sent with the request,
 * RFC 3339 time) and the usage (sent after the response, epoch-ms time). The
 * usage carries the stream key only when `keyedUsage` is set, as some
 * exporters leave it to the snapshot.
 */
export function splitTurn(sessionId: string, step: Step, keyedUsage = true): { snapshot: WireEvent; usage: WireEvent } {
  const agentId = step.agentId ?? 'main';
  const messages = Array.from({ length: step.messages ?? 0 }, (_, i) =>
    opaqueHash(`${sessionId}/${agentId}/message/${i}${i === 0 && step.rewrite ? '/compacted' : ''}`),
  );
  const snapshot: WireEvent = {
    type: 'snapshot',
    requestId: step.requestId,
    sessionId,
    agentId,
    ts: iso(T0 + step.at * SECOND),
    provider: 'anthropic',
    model: 'claude-sonnet-4-5',
    systemBlockHashes: (step.systemBlocks ?? BASE_SYSTEM).map(opaqueHash),
    tools: toolRefs(step.tools ?? SEED_TOOLS),
    cacheControl: { enabled: true, ttl: '5m', scope: 'tools+system+messages', markers: ['tools', 'system', 'messages:-1'] },
    ...(messages.length > 0 ? { messageHashes: messages } : {}),
    ...(step.expectMiss !== undefined ? { expectMiss: step.expectMiss } : {}),
  };
  const usage: WireEvent = {
    type: 'usage',
    requestId: step.requestId,
    ...(keyedUsage ? { sessionId, agentId } : {}),
    ts: T0 + (step.at + 2) * SECOND,
    provider: 'anthropic',
    usage: anthropicUsage(step.read, step.write),
  };
  return { snapshot, usage };
}

/**
 * SPEC §4.5's seed: a Claude Code session whose third request re-ordered the
 * two MCP tools and rewrote the whole prefix (tools_order_changed).
 */
export const SEED_STEPS: readonly Step[] = [
  { requestId: 'req_01', at: 0, read: 0, write: 48_000 },
  { requestId: 'req_02', at: 5, read: 48_000, write: 900 },
  { requestId: 'req_03', at: 11, tools: REORDERED_TOOLS, read: 0, write: 48_900 },
  { requestId: 'req_04', at: 20, tools: REORDERED_TOOLS, read: 48_900, write: 600 },
];

export function seedSession(sessionId = 'sess_A', steps: readonly Step[] = SEED_STEPS): WireEvent[] {
  return steps.flatMap((step) => {
    const { snapshot, usage } = splitTurn(sessionId, step);
    return [snapshot, usage];
  });
}

/** A break as GET /v1/breaks serves it: the record with the fingerprint of its cause. */
function fingerprinted<T extends object>(record: T): T & { fingerprint: string } {
  return { ...record, fingerprint: breakFingerprint(record as unknown as BreakRecord) };
}

/** The seed's break, as GET /v1/breaks serves it (SPEC §6). */
export function seedBreak(sessionId = 'sess_A') {
  return fingerprinted({
    requestId: 'req_03',
    previousRequestId: 'req_02',
    sessionId,
    agentId: 'main',
    ts: '2026-11-30T10:00:11.000Z',
    provider: 'anthropic',
    model: 'claude-sonnet-4-5',
    reason: 'tools_order_changed',
    reasons: ['tools_order_changed'],
    cause: null,
    changedToolNames: ['mcp__filesystem__read_tree', 'mcp__github__search_issues'],
    toolChanges: { added: [], removed: [], schemaChanged: [], moved: ['mcp__filesystem__read_tree', 'mcp__github__search_issues'] },
    changedSystemBlocks: null,
    firstChangedMessageIndex: null,
    previousCacheReadTokens: 48_000,
    currentCacheReadTokens: 0,
    cacheWriteTokens: 48_900,
    expectedCacheReadTokens: 48_900,
    missedCacheReadTokens: 48_900,
    // req_03 started 6 s after req_02 started (an entry is refreshed when a request starts).
    gapMs: 6_000,
    ttlMs: 300_000,
    ttlMaxMs: 300_000,
    ttlSource: 'declared',
    partialExpiry: false,
    changedParams: [],
    changesAfterCachedPrefix: [],
    providerDiagnosis: null,
    // 48,900 tokens written at $3.75 instead of read at $0.30 per MTok (Claude Sonnet 4.5).
    estimatedExtraCostUsd: 0.168705,
    // The seed names no agent version, trace or span.
    agentVersion: null,
    traceId: null,
    spanId: null,
  });
}

const OPENAI_TOOLS = [
  {
    type: 'function',
    function: {
      name: 'search_docs',
      description: 'Search the product documentation',
      parameters: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] },
    },
  },
  {
    type: 'function',
    function: {
      name: 'open_ticket',
      description: 'Open a support ticket',
      parameters: { type: 'object', properties: { title: { type: 'string' }, body: { type: 'string' } } },
    },
  },
];

/** OpenAI chat usage, as the API returns it (prompt_tokens includes the cache). */
function openaiUsage(prompt: number, cached: number) {
  return {
    prompt_tokens: prompt,
    completion_tokens: 200,
    total_tokens: prompt + 200,
    prompt_tokens_details: { cached_tokens: cached, audio_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0 },
  };
}

/**
 * An app on OpenAI chat, sent as `turn` events with the raw system prompt and
 * tool definitions (hashed by the server): the date in the system prompt
 * rolls over and the cache breaks (system_changed).
 */
export function openaiSession(sessionId = 'sess_B'): WireEvent[] {
  const system = (date: string) => `You are the support assistant for Acme.\nToday's date: ${date}.`;
  const turn = (requestId: string, at: number, date: string, prompt: number, cached: number): WireEvent => ({
    type: 'turn',
    requestId,
    sessionId,
    ts: T0 + at * SECOND,
    endTs: iso(T0 + (at + 3) * SECOND),
    provider: 'openai',
    model: 'gpt-4.1',
    system: system(date),
    toolDefinitions: OPENAI_TOOLS,
    usage: openaiUsage(prompt, cached),
  });
  return [
    turn('b_01', 60, '2026-11-30', 30_000, 0),
    turn('b_02', 90, '2026-11-30', 30_500, 29_952),
    turn('b_03', 120, '2026-12-01', 31_000, 0),
  ];
}

/** Both sessions, in delivery order. */
export function realisticBatch(): WireEvent[] {
  return [...seedSession(), ...openaiSession()];
}

/** A deterministic PRNG (mulberry32), so a failing permutation can be replayed from its seed. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function shuffle<T>(items: readonly T[], random: () => number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/** sess_B's break: the date in the system prompt rolled over. */
export function openaiBreak(sessionId = 'sess_B') {
  return fingerprinted({
    requestId: 'b_03',
    previousRequestId: 'b_02',
    sessionId,
    agentId: 'main',
    ts: '2026-11-30T10:02:00.000Z',
    provider: 'openai',
    model: 'gpt-4.1',
    reason: 'system_changed',
    reasons: ['system_changed'],
    cause: null,
    changedToolNames: [],
    toolChanges: { added: [], removed: [], schemaChanged: [], moved: [] },
    // A plain-string system prompt is one block.
    changedSystemBlocks: [0],
    firstChangedMessageIndex: null,
    previousCacheReadTokens: 29_952,
    currentCacheReadTokens: 0,
    cacheWriteTokens: 0,
    // Automatic caching: b_02's whole prompt was cached, though no write was reported.
    expectedCacheReadTokens: 30_500,
    missedCacheReadTokens: 30_500,
    // b_03 started 30 s after b_02 started.
    gapMs: 30_000,
    // OpenAI's in-memory retention: 5 min to 1 h.
    ttlMs: 300_000,
    ttlMaxMs: 3_600_000,
    ttlSource: 'provider_default',
    partialExpiry: false,
    changedParams: [],
    changesAfterCachedPrefix: [],
    providerDiagnosis: null,
    // OpenAI bills no write: 30,500 tokens paid as input ($2) instead of a read ($0.50) per MTok (gpt-4.1).
    estimatedExtraCostUsd: 0.04575,
    agentVersion: null,
    traceId: null,
    spanId: null,
  });
}

/** [requestId, state, uncached, read, write] of every turn of realisticBatch(), per session. */
export const REALISTIC_TURNS = {
  sess_A: [
    ['req_01', 'cold', 120, 0, 48_000],
    ['req_02', 'hit', 120, 48_000, 900],
    ['req_03', 'miss', 120, 0, 48_900],
    ['req_04', 'hit', 120, 48_900, 600],
  ],
  // OpenAI's prompt_tokens include the cached ones: uncached = prompt − cached.
  sess_B: [
    ['b_01', 'cold', 30_000, 0, 0],
    ['b_02', 'hit', 548, 29_952, 0],
    ['b_03', 'miss', 31_000, 0, 0],
  ],
} as const;
