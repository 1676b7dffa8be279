// A deterministic stream of realistic turn events for benchmarks: sessions of
// 200 turns (every fifth on a subagent), `concurrency` of them active at any
// time and taking turns, 12-tool snapshots, Anthropic-shaped usage, mostly hits
// with occasional breaks, spread evenly over a time span.
import { hashString } from '../../src/core/hash.js';

const TOOL_NAMES = ['Task', 'Bash', 'Glob', 'Grep', 'Read', 'Edit', 'Write', 'WebFetch', 'TodoWrite', 'mcp__github__search_issues', 'mcp__github__create_pull_request', 'mcp__filesystem__read_tree'];
const TOOLS = TOOL_NAMES.map((name) => ({ name, schemaHash: hashString(name) }));
const REORDERED = [...TOOLS.slice(0, 10), TOOLS[11]!, TOOLS[10]!];
const SYSTEM = [hashString('billing'), hashString('You are a coding agent.'), hashString('Environment.')];
const MODELS = ['claude-sonnet-4-5', 'claude-opus-4-5', 'claude-haiku-4-5'];

const TURNS_PER_SESSION = 200;

export interface WorkloadOptions {
  turns: number;
  start: number;
  spanMs: number;
  /** Sessions active at the same time. */
  concurrency: number;
}

/** The i-th event of the workload, as posted to /v1/events. */
export function benchEvent(i: number, options: WorkloadOptions): Record<string, unknown> {
  const slot = i % options.concurrency;
  const round = Math.floor(i / options.concurrency);
  const session = Math.floor(round / TURNS_PER_SESSION) * options.concurrency + slot;
  const step = round % TURNS_PER_SESSION;
  const agent = step % 5 === 4 ? 'general-purpose' : 'main';
  const ts = options.start + Math.floor((i / options.turns) * options.spanMs);
  const breaking = step % 37 === 36;
  const context = 20_000 + (step % 200) * 400;
  return {
    type: 'turn',
    requestId: `req_${i.toString(36).padStart(7, '0')}`,
    sessionId: `sess_${session.toString(36)}`,
    agentId: agent,
    ts,
    endTs: ts + 3_000,
    provider: 'anthropic',
    model: MODELS[session % MODELS.length],
    systemBlockHashes: SYSTEM,
    tools: breaking && step % 2 === 0 ? REORDERED : TOOLS,
    cacheControl: { enabled: true, ttl: '5m', scope: 'tools+system+messages', markers: ['system:2@5m', 'messages:-1@5m'] },
    uncachedInputTokens: 50 + (i % 90),
    cacheReadInputTokens: breaking ? 0 : context,
    cacheWriteInputTokens: breaking ? context + 400 : 400,
    outputTokens: 200 + (i % 300),
  };
}

export function benchBatch(first: number, size: number, options: WorkloadOptions): Record<string, unknown>[] {
  return Array.from({ length: size }, (_, k) => benchEvent(first + k, options));
}
