// One coding-agent conversation as a harness would report it: each request's
// prefix (tools → system → messages), the usage the provider's cache gives it,
// and the time that passes between requests.
import type { CacheControl, CacheEvent, SnapshotEvent, ToolRef, Usage } from '../../core/types.js';
import { ProviderCache, type Block, type CacheOutcome, type CachePolicy } from './cache.js';
import type { Random } from './random.js';

export const SECOND = 1000;
export const MINUTE = 60 * SECOND;
export const HOUR = 60 * MINUTE;

export interface Model {
  provider: string;
  model: string;
  policy: CachePolicy;
}

export interface Tool extends ToolRef {
  tokens: number;
}

/** How the harness reports a request: one turn event, a snapshot then a usage, or the usage alone. */
export type Shape = 'turn' | 'split' | 'usage-only';

export type Ttl = '5m' | '1h';

interface Message extends Block {
  /** Cleared tool results stay cleared: a second pruning leaves them alone. */
  kind: 'prompt' | 'answer' | 'result' | 'cleared' | 'summary';
}

export interface AgentOptions {
  agentId: string;
  model: Model;
  tools: readonly Tool[];
  /** The system prompt's blocks for a request made at `ts` (a date line changes at midnight). */
  system: (ts: number) => Block[];
  /** The declared cache_control TTL; absent where the provider caches automatically. */
  ttl?: Ttl;
  shape?: Shape;
  /** False: the usage carries no cache fields (a proxy strips them). */
  reportsCache?: boolean;
  /** Summarise the history, declaring expectMiss "compaction", past this many tokens (default 150k, within a 200k window). */
  compactAbove?: number;
  /** Clear old tool results in place, declaring nothing, past this many tokens. */
  pruneAbove?: number;
  /** Where the harness puts its message marker: on the newest message (default), or on the newest user prompt only. */
  messageMarker?: 'newest' | 'prompt';
  /** The harness reports its request parameters (extended thinking), as Claude Code's bodies do. */
  reportsParams?: boolean;
}

const DEFAULT_COMPACT_ABOVE = 150_000;
/** Messages a history rewrite keeps as they are. */
const KEEP_RECENT = 8;

export class Session {
  readonly events: CacheEvent[] = [];
  readonly cache = new ProviderCache();

  constructor(
    readonly id: string,
    readonly random: Random,
  ) {}

  agent(options: AgentOptions, clock: number): Agent {
    return new Agent(this, options, clock);
  }

  requestId(): string {
    return `req_${this.random.alphanumeric(24)}`;
  }
}

export class Agent {
  model: Model;
  tools: readonly Tool[];
  ttl: Ttl | undefined;
  /** Extended thinking's token budget; undefined: off. */
  thinking: number | undefined;
  /** The provider's cache_miss_reason type on the next response (Anthropic's diagnostics), then none again. */
  diagnosis: string | undefined;
  compactions = 0;
  prunes = 0;
  private messages: Message[] = [];
  private readonly random: Random;

  constructor(
    private readonly session: Session,
    private readonly options: AgentOptions,
    public clock: number,
  ) {
    this.model = options.model;
    this.tools = options.tools;
    this.ttl = options.ttl;
    this.random = session.random;
  }

  get agentId(): string {
    return this.options.agentId;
  }

  wait(ms: number): void {
    this.clock += ms;
  }

  say(tokens: number): void {
    this.push('prompt', tokens);
  }

  /** A tool ran for `ms` and its output joins the history. */
  result(tokens: number, ms: number): void {
    this.clock += ms;
    this.push('result', tokens);
  }

  /** The user reads the answer and types the next prompt; now and then they step away. */
  think(): void {
    this.clock += this.random.chance(0.05) ? this.random.logUniform(6 * MINUTE, 40 * MINUTE) : this.random.logUniform(8 * SECOND, 3 * MINUTE);
  }

  /** One user request: a prompt, `toolTurns` tool calls, a final answer. */
  task(toolTurns: number): void {
    this.say(this.random.logUniform(20, 600));
    this.loop(toolTurns);
  }

  /** The agent loop: `toolTurns` tool calls and their results, then a final answer. */
  loop(toolTurns: number): void {
    for (let i = 0; i < toolTurns; i++) this.toolCall();
    this.request(this.random.logUniform(80, 1200));
  }

  /** The model calls a tool; the tool runs and its output joins the history. */
  toolCall(): void {
    this.request(this.random.logUniform(40, 400));
    this.result(this.random.logUniform(80, 8000), this.random.logUniform(300, 20 * SECOND));
  }

  /** Tasks separated by the user's think time, while there is time before `deadline`. */
  work(tasks: number, deadline: number): void {
    for (let i = 0; i < tasks; i++) {
      this.think();
      if (this.clock >= deadline) return;
      this.task(this.random.int(2, 12));
    }
  }

  /**
   * The model hands work to subagents that run side by side, each in its own
   * stream; their requests interleave in time, and this agent waits for all.
   */
  delegate(subagents: readonly { options: AgentOptions; toolTurns: number }[]): void {
    this.request(this.random.logUniform(60, 300));
    let done = this.clock;
    for (const { options, toolTurns } of subagents) {
      const sub = this.session.agent(options, this.clock + this.random.int(50, 800));
      sub.say(this.random.logUniform(300, 1500));
      for (let i = 0; i < toolTurns; i++) {
        sub.request(this.random.logUniform(40, 300));
        sub.result(this.random.logUniform(80, 6000), this.random.logUniform(200, 8 * SECOND));
      }
      sub.request(this.random.logUniform(300, 1500));
      done = Math.max(done, sub.clock);
    }
    this.clock = done;
    for (let i = 0; i < subagents.length; i++) this.push('result', this.random.logUniform(400, 2000));
  }

  /** The provider drops this session's cache entries (load, a deploy): nothing in the prompt changed. */
  evictCache(): void {
    this.session.cache.evict();
  }

  /** One model request with the current prefix; the answer joins the history. */
  request(output: number): void {
    this.send(output, this.rewriteHistory());
  }

  private push(kind: Message['kind'], tokens: number): void {
    this.messages.push({ kind, hash: this.random.hex(16), tokens });
  }

  private contextTokens(): number {
    let total = 0;
    for (const tool of this.tools) total += tool.tokens;
    for (const block of this.options.system(this.clock)) total += block.tokens;
    for (const message of this.messages) total += message.tokens;
    return total;
  }

  /** Compaction or pruning when the context has grown too long; the expectMiss to declare, if any. */
  private rewriteHistory(): string | undefined {
    const context = this.contextTokens();
    const { compactAbove = DEFAULT_COMPACT_ABOVE, pruneAbove } = this.options;
    if (context > compactAbove) {
      // The harness asks for a summary on the full prefix (a cache hit)…
      this.say(this.random.int(150, 300));
      const summary = this.random.logUniform(2500, 7000);
      this.send(summary, undefined);
      // …then starts again from it, and says so.
      this.messages = [{ kind: 'summary', hash: this.random.hex(16), tokens: summary }];
      this.say(this.random.int(40, 120));
      this.compactions++;
      return 'compaction';
    }
    if (pruneAbove !== undefined && context > pruneAbove) {
      const keepFrom = this.messages.length - KEEP_RECENT;
      let cleared = false;
      this.messages = this.messages.map((message, i) => {
        if (message.kind !== 'result' || i >= keepFrom) return message;
        cleared = true;
        return { kind: 'cleared', hash: this.random.hex(16), tokens: 12 };
      });
      if (cleared) this.prunes++;
    }
    return undefined;
  }

  private send(output: number, expectMiss: string | undefined): void {
    const start = this.clock;
    const system = this.options.system(start);
    const toolBlocks = this.tools.map((t) => ({ hash: `${t.name}\u0000${t.schemaHash}`, tokens: t.tokens }));
    // Request parameters such as thinking invalidate the messages, not tools or system: they sit between them.
    const params = { hash: `params:${this.thinking ?? 'off'}`, tokens: 0 };
    const blocks = [...toolBlocks, ...system, params, ...this.messages];
    const explicit = this.model.policy.explicit;
    const messageMarker = this.options.messageMarker === 'prompt' ? this.messages.findLastIndex((m) => m.kind === 'prompt') : this.messages.length - 1;
    const firstMessage = toolBlocks.length + system.length + 1;
    const markers = [toolBlocks.length - 1, toolBlocks.length + system.length - 1, messageMarker < 0 ? -1 : firstMessage + messageMarker].filter((i) => i >= 0);
    const end = start + 700 + output * 16 + this.random.int(0, 1500);
    const outcome = this.session.cache.request(
      {
        namespace: `${this.model.model}|${this.ttl ?? 'automatic'}`,
        blocks,
        markers,
        start,
        end,
        ttlMs: this.ttl === '1h' ? HOUR : 5 * MINUTE,
      },
      this.model.policy,
    );
    const cacheControl: CacheControl | undefined =
      explicit && this.ttl
        ? {
            enabled: true,
            ttl: this.ttl,
            markers: [...(toolBlocks.length > 0 ? ['tools'] : []), 'system', ...(messageMarker < 0 ? [] : [`messages:${messageMarker}`])],
          }
        : undefined;
    this.emit(
      {
        requestId: this.session.requestId(),
        sessionId: this.session.id,
        agentId: this.agentId,
        ts: start,
        provider: this.model.provider,
        model: this.model.model,
        tools: this.tools.map(({ name, schemaHash }) => ({ name, schemaHash })),
        systemBlockHashes: system.map((b) => b.hash),
        messageHashes: this.messages.map((m) => m.hash),
        ...(cacheControl ? { cacheControl } : {}),
        ...(this.options.reportsParams ? { params: {}, ...(this.thinking ? { thinking: { type: 'enabled', budget_tokens: this.thinking } } : {}) } : {}),
        ...(expectMiss ? { expectMiss } : {}),
      },
      this.usageOf(outcome, output),
      end,
      this.diagnosis === undefined ? undefined : { cache_miss_reason: { type: this.diagnosis } },
    );
    this.diagnosis = undefined;
    this.push('answer', output);
    this.clock = end;
  }

  private usageOf(outcome: CacheOutcome, output: number): Usage {
    if (this.options.reportsCache === false) {
      return { uncached: outcome.total, read: 0, write: 0, write1h: 0, output, cacheReported: false, writeReported: false };
    }
    if (this.model.policy.explicit) {
      // Anthropic bills the few tokens after the last marker as plain input.
      const uncached = this.random.int(2, 40);
      const write1h = this.ttl === '1h' ? outcome.write : 0;
      return { uncached, read: outcome.read, write: outcome.write, write1h, output, cacheReported: true, writeReported: true };
    }
    return { uncached: outcome.total - outcome.read, read: outcome.read, write: 0, write1h: 0, output, cacheReported: true, writeReported: false };
  }

  private emit(snapshot: Omit<SnapshotEvent, 'type'> & { provider: string }, usage: Usage, end: number, diagnostics: unknown): void {
    const { requestId, sessionId, agentId, provider, model } = snapshot;
    const shape = this.options.shape ?? 'turn';
    const diagnosed = diagnostics === undefined ? {} : { diagnostics };
    if (shape === 'turn') {
      this.session.events.push({ ...snapshot, type: 'turn', usage, endTs: end, ...diagnosed });
      return;
    }
    if (shape === 'split') this.session.events.push({ ...snapshot, type: 'snapshot' });
    this.session.events.push({ type: 'usage', requestId, sessionId, agentId, ts: end, provider, model, usage, ...diagnosed });
  }
}
