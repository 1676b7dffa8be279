// What the demo's harnesses send: tool lists as coding agents build them
// (built-ins, then MCP servers in discovery order), system prompts, models.
import { hashString } from '../../core/hash.js';
import type { Model, Tool } from './agent.js';
import type { Block, CachePolicy } from './cache.js';
import type { Random } from './random.js';

function tool(name: string, tokens: number): Tool {
  return { name, schemaHash: hashString(`demo-tool:${name}:v1`), tokens };
}

export const BUILTIN: readonly Tool[] = [
  tool('task', 900),
  tool('shell', 1100),
  tool('glob', 300),
  tool('grep', 650),
  tool('read_file', 700),
  tool('edit_file', 800),
  tool('write_file', 450),
  tool('web_fetch', 500),
  tool('todo_write', 1400),
  tool('tool_search', 350),
];
export const EXPLORE: readonly Tool[] = BUILTIN.filter((t) => ['glob', 'grep', 'read_file', 'shell'].includes(t.name));
export const GITHUB: readonly Tool[] = [
  tool('mcp__github__search_issues', 420),
  tool('mcp__github__get_pull_request', 380),
  tool('mcp__github__create_review_comment', 510),
];
export const FILESYSTEM: readonly Tool[] = [tool('mcp__filesystem__read_tree', 360), tool('mcp__filesystem__search_files', 400)];
/** Deferred: only listed once tool_search has revealed them. */
export const POSTGRES: readonly Tool[] = [tool('mcp__postgres__query', 450), tool('mcp__postgres__list_tables', 300)];
export const CODEX: readonly Tool[] = [tool('shell', 1100), tool('apply_patch', 900), tool('update_plan', 400), tool('view_image', 200)];
export const GEMINI_CLI: readonly Tool[] = [
  tool('read_file', 600),
  tool('write_file', 400),
  tool('replace', 700),
  tool('run_shell_command', 900),
  tool('glob', 300),
  tool('search_file_content', 500),
  tool('google_web_search', 250),
];

const ANTHROPIC_CACHE: CachePolicy = { explicit: true, granularity: 1, minimum: 1024 };

export const SONNET: Model = { provider: 'anthropic', model: 'claude-sonnet-4-5', policy: ANTHROPIC_CACHE };
export const OPUS: Model = { provider: 'anthropic', model: 'claude-opus-4-5', policy: ANTHROPIC_CACHE };
export const HAIKU: Model = { provider: 'anthropic', model: 'claude-haiku-4-5', policy: ANTHROPIC_CACHE };
export const QWEN: Model = { provider: 'dashscope', model: 'qwen3-coder-plus', policy: ANTHROPIC_CACHE };
export const OPENROUTER_SONNET: Model = { provider: 'openrouter', model: 'anthropic/claude-sonnet-4.5', policy: ANTHROPIC_CACHE };
export const GPT5: Model = { provider: 'openai', model: 'gpt-5', policy: { explicit: false, granularity: 128, minimum: 1024 } };
export const GEMINI_PRO: Model = { provider: 'gemini', model: 'gemini-2.5-pro', policy: { explicit: false, granularity: 1, minimum: 2048 } };
export const DEEPSEEK: Model = { provider: 'deepseek', model: 'deepseek-chat', policy: { explicit: false, granularity: 64, minimum: 64 } };

function block(label: string, tokens: number): Block {
  return { hash: hashString(label), tokens };
}

/**
 * A coding agent's system prompt: the harness's instructions, the session's
 * environment, the project's instructions file. `dateAt` puts today's date
 * in the environment block, as many harnesses do.
 */
export function codingSystem(
  harness: string,
  sessionId: string,
  random: Random,
  dateAt?: (ts: number) => string,
): (ts: number) => Block[] {
  const instructions = block(`demo-system:${harness}`, 2800);
  const projectFile = block(`demo-project:${sessionId}`, random.int(300, 1800));
  const environment = `demo-env:${sessionId}`;
  if (!dateAt) {
    const fixed = [instructions, block(environment, 350), projectFile];
    return () => fixed;
  }
  return (ts) => [instructions, block(`${environment}:${dateAt(ts)}`, 360), projectFile];
}

/** A subagent's own short system prompt. */
export function subagentSystem(kind: string): (ts: number) => Block[] {
  const fixed = [block(`demo-subagent:${kind}`, 1400)];
  return () => fixed;
}
