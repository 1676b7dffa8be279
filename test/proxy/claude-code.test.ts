// The real Claude Code CLI, installed from the npm registry, in headless mode
// (`claude -p`) through a `cachebreak proxy` process to a mock Anthropic API:
// two turns of one conversation, the second resumed with a tool disallowed and
// answered with no cache read. The break is stored in Claude Code's own session
// with its real reason and tool name, and nothing of the key, the prompt or
// the system prompt reaches the database.
import { existsSync, readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { breaksOf, turnsOf } from '../e2e/api.js';
import { startServer } from '../e2e/server.js';
import { tempDir } from '../helpers.js';
import { installHarness, type NpmHarness } from './npm-harness.js';
import { anthropicAnswer, mockUpstream, type Received } from './upstreams.js';
import { waitFor } from './wait.js';

const VERSION = '2.1.332';
const KEY = 'sk-ant-api03-E2EKEYVALUE0000';
const PROMPTS = ['PROMPT-ONE-SECRET: say hello', 'PROMPT-TWO-SECRET: say hello again'];
const RUN_TIMEOUT_MS = 40_000;

interface Tool {
  name: string;
  defer_loading?: boolean;
}
interface MessagesRequest {
  model: string;
  system: { text: string }[];
  tools: Tool[];
}
interface ClaudeResult {
  session_id: string;
  result: string;
  is_error: boolean;
  usage: { cache_creation_input_tokens: number; cache_read_input_tokens: number };
}

/** The tools of a request that are part of its cached prefix (deferred ones are loaded on demand). */
const prefixTools = (request: MessagesRequest) => request.tools.filter((tool) => tool.defer_loading !== true).map((tool) => tool.name);

let claude: NpmHarness;
beforeAll(async () => {
  claude = await installHarness('@anthropic-ai/claude-code', VERSION, '@anthropic-ai/claude-code/cli-wrapper.cjs');
}, 200_000);

describe('Claude Code through cachebreak proxy', () => {
  it('a resumed conversation with a tool disallowed is a tools_schema_changed break in its own session', async () => {
    const usage: Record<string, number> = { input_tokens: 12, cache_creation_input_tokens: 10_000, cache_read_input_tokens: 0 };
    const upstream = await mockUpstream((request) => anthropicAnswer(request, usage, `req_${upstream.received.length}`));
    try {
      const server = await startServer({ command: 'proxy', args: ['--anthropic-upstream', upstream.url] });
      const work = tempDir();
      // A fresh HOME: no settings, credentials or history of the machine; no telemetry, updates or other traffic.
      const env = {
        PATH: process.env.PATH,
        HOME: tempDir(),
        ANTHROPIC_BASE_URL: `${server.proxyUrl}/anthropic`,
        ANTHROPIC_API_KEY: KEY,
        DISABLE_TELEMETRY: '1',
        DISABLE_AUTOUPDATER: '1',
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      };
      const turn = async (args: string[]): Promise<ClaudeResult> => {
        const run = await claude.run(['-p', ...args, '--output-format', 'json'], { cwd: work, env, timeoutMs: RUN_TIMEOUT_MS });
        if (run.code !== 0) throw new Error(`${claude.spec} exited ${run.code ?? run.signal}; stderr:\n${run.stderr.slice(-2000)}\nstdout:\n${run.stdout.slice(-2000)}`);
        return JSON.parse(run.stdout) as ClaudeResult;
      };

      const first = await turn([PROMPTS[0]!]);
      expect(first).toMatchObject({ is_error: false, result: 'Hello!', usage: { cache_creation_input_tokens: 10_000 } });
      Object.assign(usage, { cache_creation_input_tokens: 10_500, cache_read_input_tokens: 0 });
      const second = await turn([PROMPTS[1]!, '--resume', first.session_id, '--disallowedTools', 'Bash']);
      expect(second).toMatchObject({ is_error: false, result: 'Hello!', session_id: first.session_id, usage: { cache_read_input_tokens: 0 } });

      // Each call went to the upstream, with the key, and the session header Claude Code sends.
      expect(upstream.received.map((r: Received) => [r.method, r.url.split('?')[0], r.headers['x-api-key'], r.headers['x-claude-code-session-id']])).toEqual([
        ['POST', '/v1/messages', KEY, first.session_id],
        ['POST', '/v1/messages', KEY, first.session_id],
      ]);
      const [before, after] = upstream.received.map((r) => JSON.parse(r.body.toString()) as MessagesRequest);
      const removed = prefixTools(before!).filter((name) => !prefixTools(after!).includes(name));
      const added = prefixTools(after!).filter((name) => !prefixTools(before!).includes(name));
      expect(removed).toContain('Bash');

      const breaks = await waitFor('the break', () => breaksOf(server.url), (found) => found.length >= 1);
      expect(breaks).toHaveLength(1);
      expect(breaks[0]).toMatchObject({
        requestId: 'req_2',
        previousRequestId: 'req_1',
        sessionId: first.session_id,
        provider: 'anthropic',
        model: before!.model,
        reason: 'tools_schema_changed',
        changedToolNames: [...removed, ...added].sort(),
        toolChanges: { added, removed, schemaChanged: [], moved: [] },
        missedCacheReadTokens: 10_000,
      });
      expect(breaks[0]!.agentId).toMatch(/^system-[0-9a-f]{8}$/);
      const turns = await turnsOf(server.url, first.session_id);
      expect(turns.map((t) => [t.requestId, t.agentId, t.provider, t.model, t.usage?.write, t.usage?.read])).toEqual([
        ['req_1', breaks[0]!.agentId, 'anthropic', before!.model, 10_000, 0],
        ['req_2', breaks[0]!.agentId, 'anthropic', before!.model, 10_500, 0],
      ]);

      await server.stop();
      const stored = [server.db, `${server.db}-wal`].filter(existsSync).map((path) => readFileSync(path).toString('latin1')).join('');
      for (const secret of [KEY, ...PROMPTS, before!.system[1]!.text.slice(0, 60)]) expect(stored).not.toContain(secret);
    } finally {
      await upstream.close();
    }
  }, 60_000);
});
