// The demo workload: a day of coding-agent sessions in which every break
// reason of SPEC §4.4 happens the way it happens in the field. Each session
// is a short script; the usage numbers come from a simulated provider cache,
// so the detector finds each cause on its own.
import { hashString } from '../../core/hash.js';
import type { CacheEvent } from '../../core/types.js';
import { HOUR, MINUTE, SECOND, Session, type AgentOptions, type Model, type Tool } from './agent.js';
import {
  BUILTIN,
  CODEX,
  codingSystem,
  DEEPSEEK,
  EXPLORE,
  FILESYSTEM,
  GEMINI_CLI,
  GEMINI_PRO,
  GITHUB,
  GPT5,
  HAIKU,
  OPENROUTER_SONNET,
  OPUS,
  POSTGRES,
  QWEN,
  SONNET,
  subagentSystem,
} from './catalog.js';
import { Random } from './random.js';

export interface DemoOptions {
  seed: number;
  /** The workload covers the 24 hours before this instant (epoch ms). */
  now: number;
}

interface Script {
  name: string;
  /** When the session starts, in hours before now. */
  hoursAgo: number;
  run(session: Session, start: number, deadline: number): void;
}

function explore(s: Session): AgentOptions {
  return { agentId: `explore-${s.random.hex(4)}`, model: HAIKU, tools: EXPLORE, system: subagentSystem('explore'), ttl: '5m' };
}

function general(s: Session, model: Model, tools: readonly Tool[]): AgentOptions {
  return { agentId: `task-${s.random.hex(4)}`, model, tools, system: subagentSystem('general'), ttl: '5m' };
}

function claudeCode(s: Session, model: Model, tools: readonly Tool[], extra: Partial<AgentOptions> = {}): AgentOptions {
  return { agentId: 'main', model, tools, system: codingSystem('claude-code', s.id, s.random), ttl: '5m', reportsParams: true, ...extra };
}

const SCRIPTS: readonly Script[] = [
  {
    name: 'refactor-auth',
    hoursAgo: 23.5,
    run(s, start, deadline) {
      const all = [...BUILTIN, ...FILESYSTEM, ...GITHUB];
      const main = s.agent(claudeCode(s, SONNET, all), start);
      main.work(6, deadline);
      main.delegate([
        { options: explore(s), toolTurns: s.random.int(5, 10) },
        { options: explore(s), toolTurns: s.random.int(5, 10) },
      ]);
      main.work(3, deadline);
      // The github MCP server's connection drops: its tools leave the list…
      main.tools = [...BUILTIN, ...FILESYSTEM];
      main.work(2, deadline);
      // …and come back when it reconnects: the prefix changed twice.
      main.tools = all;
      main.work(2, deadline);
      // Lunch: the 5-minute cache is long gone when the user is back.
      main.wait(s.random.logUniform(35 * MINUTE, 55 * MINUTE));
      // Long enough for the context to fill up and be compacted.
      while (main.compactions === 0 && main.clock < deadline) main.work(1, deadline);
      main.delegate([{ options: general(s, SONNET, all), toolTurns: s.random.int(8, 14) }]);
      main.work(4, deadline);
    },
  },
  {
    name: 'support-bot',
    hoursAgo: 22,
    run(s, start) {
      // A chat app whose system prompt opens with the current time: no request
      // can reuse the last one's prefix, so every turn writes it all again.
      const instructions = { hash: hashString('demo-support:instructions'), tokens: 2200 };
      const faq = { hash: hashString('demo-support:faq'), tokens: 5200 };
      const system = (ts: number) => [
        { hash: hashString(`demo-support:clock:${new Date(ts).toISOString().slice(0, 19)}`), tokens: 30 },
        instructions,
        faq,
      ];
      const bot = s.agent({ agentId: 'main', model: HAIKU, tools: [], system, ttl: '5m' }, start);
      const exchanges = s.random.int(25, 35);
      for (let i = 0; i < exchanges; i++) {
        bot.say(s.random.logUniform(15, 300));
        bot.request(s.random.logUniform(60, 500));
        bot.wait(s.random.logUniform(20 * SECOND, 150 * SECOND));
      }
    },
  },
  {
    name: 'fix-flaky-test',
    hoursAgo: 20.5,
    run(s, start, deadline) {
      const main = s.agent(claudeCode(s, SONNET, [...BUILTIN, ...FILESYSTEM, ...GITHUB]), start);
      main.work(5, deadline);
      main.delegate([0, 1, 2].map(() => ({ options: explore(s), toolTurns: s.random.int(4, 9) })));
      main.work(3, deadline);
      // `/mcp` reconnects both servers and github answers first this time:
      // the same tools, in a different order.
      main.tools = [...BUILTIN, ...GITHUB, ...FILESYSTEM];
      // The provider's diagnosis of the miss agrees: the tools changed.
      main.diagnosis = 'tools_changed';
      main.work(3, deadline);
      main.delegate([{ options: general(s, SONNET, main.tools), toolTurns: s.random.int(8, 14) }]);
      main.work(4, deadline);
    },
  },
  {
    name: 'codex-api-client',
    hoursAgo: 18,
    run(s, start, deadline) {
      const main = s.agent({ agentId: 'main', model: GPT5, tools: CODEX, system: codingSystem('codex', s.id, s.random), shape: 'split' }, start);
      main.work(4, deadline);
      // A coffee break longer than OpenAI keeps a prefix cached.
      main.wait(s.random.logUniform(8 * MINUTE, 25 * MINUTE));
      main.work(3, deadline);
    },
  },
  {
    name: 'migrate-db',
    hoursAgo: 16.5,
    run(s, start, deadline) {
      const tools = [...BUILTIN, ...GITHUB];
      const main = s.agent(claudeCode(s, SONNET, tools), start);
      main.work(3, deadline);
      // The model looks for a database tool: tool_search reveals the deferred
      // postgres tools, which the harness appends to the list.
      main.think();
      main.say(s.random.logUniform(40, 300));
      main.request(s.random.logUniform(60, 200));
      main.result(s.random.logUniform(150, 400), s.random.logUniform(300, 1500));
      main.tools = [...tools, ...POSTGRES];
      main.loop(s.random.int(3, 8));
      main.work(2, deadline);
      // The user switches to a stronger model to plan the migration.
      main.model = OPUS;
      main.work(4, deadline);
    },
  },
  {
    name: 'qwen-telemetry',
    hoursAgo: 15,
    run(s, start, deadline) {
      // This harness's telemetry reports usage only: with no prefix to
      // compare, a break can only be "unknown" (and whether the gap passed the TTL).
      const main = s.agent(
        { agentId: 'main', model: QWEN, tools: BUILTIN, system: codingSystem('qwen-code', s.id, s.random), ttl: '5m', shape: 'usage-only' },
        start,
      );
      main.work(3, deadline);
      main.wait(s.random.logUniform(9 * MINUTE, 20 * MINUTE));
      main.work(2, deadline);
      main.think();
      main.say(s.random.logUniform(20, 300));
      main.toolCall();
      main.evictCache();
      main.loop(s.random.int(2, 5));
      main.work(2, deadline);
    },
  },
  {
    name: 'long-review',
    hoursAgo: 14,
    run(s, start, deadline) {
      const main = s.agent(claudeCode(s, OPUS, [...BUILTIN, ...GITHUB]), start);
      main.work(3, deadline);
      // Reviews run long, so the harness moves to the 1-hour TTL in the middle
      // of a task: the re-timed markers make a new prefix (cache_control_changed;
      // after a pause past 5 minutes it would be the expired TTL instead).
      main.think();
      main.say(s.random.logUniform(20, 600));
      main.toolCall();
      main.ttl = '1h';
      main.loop(s.random.int(2, 12));
      main.work(1, deadline);
      // Meetings between review rounds: within the hour, the cache holds.
      main.wait(s.random.logUniform(12 * MINUTE, 25 * MINUTE));
      main.work(2, deadline);
      main.wait(s.random.logUniform(15 * MINUTE, 30 * MINUTE));
      main.work(2, deadline);
      // Back after more than an hour: even the 1-hour cache has expired.
      main.wait(s.random.logUniform(70 * MINUTE, 90 * MINUTE));
      main.work(2, deadline);
    },
  },
  {
    name: 'ci-triage',
    hoursAgo: 12.5,
    run(s, start, deadline) {
      const tools = [...BUILTIN, ...GITHUB];
      const main = s.agent(claudeCode(s, OPUS, tools), start);
      main.work(3, deadline);
      main.delegate([0, 1].map(() => ({ options: general(s, SONNET, tools), toolTurns: s.random.int(5, 10) })));
      main.work(3, deadline);
      main.delegate([0, 1, 2].map(() => ({ options: explore(s), toolTurns: s.random.int(3, 8) })));
      main.work(4, deadline);
    },
  },
  {
    name: 'nightly-docs',
    hoursAgo: 11,
    run(s, start, deadline) {
      // The user's local midnight falls 45-105 minutes in: their time zone is
      // whichever puts it there. The date in the system prompt changes with it.
      const midnight = Math.ceil((start + 45 * MINUTE) / HOUR) * HOUR;
      const utcHour = new Date(midnight).getUTCHours();
      const offset = (utcHour <= 11 ? -utcHour : 24 - utcHour) * HOUR;
      const localDate = (ts: number) => new Date(ts + offset).toISOString().slice(0, 10);
      const main = s.agent(
        { agentId: 'main', model: SONNET, tools: [...BUILTIN, ...FILESYSTEM], system: codingSystem('claude-code', s.id, s.random, localDate), ttl: '5m' },
        start,
      );
      while (main.clock < midnight + 40 * MINUTE && main.clock < deadline) main.work(1, deadline);
    },
  },
  {
    name: 'gemini-cli-docs',
    hoursAgo: 9,
    run(s, start, deadline) {
      const main = s.agent(
        { agentId: 'main', model: GEMINI_PRO, tools: GEMINI_CLI, system: codingSystem('gemini-cli', s.id, s.random), shape: 'split' },
        start,
      );
      main.work(5, deadline);
    },
  },
  {
    name: 'prune-history',
    hoursAgo: 7.5,
    run(s, start, deadline) {
      // This harness clears old tool results in place once the context grows,
      // without declaring it: the history is rewritten under the cache.
      const main = s.agent(claudeCode(s, SONNET, [...BUILTIN, ...FILESYSTEM], { pruneAbove: 60_000 }), start);
      while (main.prunes === 0 && main.clock < deadline) main.work(1, deadline);
      main.work(5, deadline);
    },
  },
  {
    name: 'think-harder',
    hoursAgo: 6.5,
    run(s, start, deadline) {
      const main = s.agent(claudeCode(s, SONNET, [...BUILTIN, ...GITHUB]), start);
      main.work(3, deadline);
      // The user asks the model to think harder: extended thinking changes the
      // request, which keeps tools and system cached but not the messages.
      main.thinking = 16_000;
      // The provider names what the thinking setting invalidated (the messages), not the setting.
      main.diagnosis = 'messages_changed';
      main.work(3, deadline);
    },
  },
  {
    name: 'batch-refactor',
    hoursAgo: 6.2,
    run(s, start, deadline) {
      // A harness that marks only the newest user prompt: a long tool loop
      // puts the next prompt's marker more than 20 blocks past the cached one,
      // beyond the lookback, and the history is written again.
      const main = s.agent(claudeCode(s, SONNET, [...BUILTIN, ...FILESYSTEM], { messageMarker: 'prompt' }), start);
      main.work(2, deadline);
      main.think();
      main.task(s.random.int(14, 18));
      main.work(2, deadline);
    },
  },
  {
    name: 'deepseek-scripts',
    hoursAgo: 6,
    run(s, start, deadline) {
      const tools = BUILTIN.filter((t) => ['shell', 'read_file', 'edit_file'].includes(t.name));
      const main = s.agent({ agentId: 'main', model: DEEPSEEK, tools, system: codingSystem('aider', s.id, s.random) }, start);
      main.work(4, deadline);
    },
  },
  {
    name: 'add-endpoint',
    hoursAgo: 5,
    run(s, start, deadline) {
      const main = s.agent(claudeCode(s, SONNET, [...BUILTIN, ...GITHUB]), start);
      main.work(6, deadline);
      main.delegate([{ options: general(s, SONNET, main.tools), toolTurns: s.random.int(6, 12) }]);
      main.work(6, deadline);
    },
  },
  {
    name: 'proxy-no-cache-fields',
    hoursAgo: 4,
    run(s, start, deadline) {
      // Behind a proxy that strips the cache fields from usage: unreported, which is not 0%.
      const main = s.agent(claudeCode(s, OPENROUTER_SONNET, BUILTIN, { reportsCache: false }), start);
      main.work(3, deadline);
    },
  },
  {
    name: 'bump-deps',
    hoursAgo: 3,
    run(s, start, deadline) {
      const main = s.agent(claudeCode(s, SONNET, [...BUILTIN, ...GITHUB]), start);
      main.work(3, deadline);
      // Mid-task, the provider drops the cache (load, a deploy): seconds
      // later, with nothing changed, nothing is read.
      main.think();
      main.say(s.random.logUniform(20, 300));
      main.toolCall();
      main.evictCache();
      main.loop(s.random.int(2, 6));
      main.delegate([0, 1].map(() => ({ options: explore(s), toolTurns: s.random.int(3, 7) })));
      main.work(2, deadline);
    },
  },
  {
    name: 'pair-review',
    hoursAgo: 2.8,
    run(s, start, deadline) {
      // Reviewing with a colleague: a few requests, then 10-20 minutes of
      // talk before the next. The 5-minute cache expires every time; the
      // 1-hour tier would have held it (TTL advice: switch to 1 h).
      const main = s.agent(claudeCode(s, SONNET, [...BUILTIN, ...GITHUB]), start);
      main.work(2, deadline);
      for (let round = 0; round < 5 && main.clock < deadline; round++) {
        main.wait(s.random.logUniform(10 * MINUTE, 20 * MINUTE));
        main.work(1, deadline);
      }
    },
  },
  {
    name: 'payments-webhook',
    hoursAgo: 1.5,
    run(s, start, deadline) {
      // Still going: the dashboards' last minutes have data.
      const main = s.agent(claudeCode(s, SONNET, [...BUILTIN, ...GITHUB]), start);
      main.work(3, deadline);
      main.delegate([0, 1, 2].map(() => ({ options: explore(s), toolTurns: s.random.int(3, 8) })));
      while (main.clock < deadline) main.work(1, deadline);
    },
  },
];

/**
 * What the workload plants for each insight (docs/insights.md), by script
 * name (a session id is the name and a random suffix); test/insights/demo.test.ts
 * checks that each insight finds exactly this.
 */
export const DEMO_PLANTED = {
  avoidable: {
    /** fix-flaky-test's MCP servers reconnect in another order: every tool of both moves. */
    stable_tool_order: { scripts: ['fix-flaky-test'], tools: [...GITHUB, ...FILESYSTEM].map((t) => t.name) },
    /** support-bot's system prompt opens with the time: block 0 changes on every turn. nightly-docs' date changes once: an edit, not counted. */
    volatile_block_after_breakpoint: { scripts: ['support-bot'], blocks: ['system:0'] },
    /** batch-refactor marks only its latest prompt: a long tool loop puts the next one beyond the lookback. */
    breakpoint_within_lookback: { scripts: ['batch-refactor'] },
  },
  /** The parts whose changes broke caches: the clock and date blocks, the github tools (refactor-auth's reconnect), the postgres tools (migrate-db). */
  volatile: {
    parts: ['system:0', 'system:1', ...GITHUB.map((t) => t.name), ...POSTGRES.map((t) => t.name)],
  },
  /** Subagents started side by side with one prefix: two or more alike per delegation. */
  fanOut: {
    delegations: [
      { script: 'refactor-auth', agents: 'explore', turns: 2 },
      { script: 'fix-flaky-test', agents: 'explore', turns: 3 },
      { script: 'ci-triage', agents: 'task', turns: 2 },
      { script: 'ci-triage', agents: 'explore', turns: 3 },
      { script: 'bump-deps', agents: 'explore', turns: 2 },
      { script: 'payments-webhook', agents: 'explore', turns: 3 },
    ],
  },
  /** pair-review's main stream would have saved most at 1 h; long-review, already at 1 h, is advised to stay. */
  ttl: { toOneHour: 'pair-review', staysAtOneHour: 'long-review' },
  /** support-bot never reads: its first system block is a clock. */
  chronic: [{ script: 'support-bot', cause: 'leading_volatile_block' }],
  /** The provider's diagnoses: it agrees on fix-flaky-test's tools; on think-harder it names the messages the thinking setting invalidated. */
  agreement: {
    provider: [
      { script: 'fix-flaky-test', cachebreak: 'tools_changed', other: 'tools_changed' },
      { script: 'think-harder', cachebreak: 'request_params_changed', other: 'messages_rewritten' },
    ],
  },
} as const;

/** Event time: request start for snapshots and turns, response end for usage. */
function timeOf(event: CacheEvent): number {
  return event.ts ?? 0;
}

/** The workload's events, in time order; a pure function of seed and now. */
export function demoWorkload({ seed, now }: DemoOptions): CacheEvent[] {
  // No session starts a task after this, so none runs past now.
  const deadline = now - 15 * MINUTE;
  const events: CacheEvent[] = [];
  SCRIPTS.forEach((script, index) => {
    // Each session draws from its own stream, so scripts do not shift each other's numbers.
    const random = new Random((seed ^ Math.imul(index + 1, 0x9e3779b9)) >>> 0);
    const session = new Session(`${script.name}-${random.hex(4)}`, random);
    script.run(session, now - script.hoursAgo * HOUR, deadline);
    events.push(...session.events);
  });
  return events.sort((a, b) => timeOf(a) - timeOf(b));
}
