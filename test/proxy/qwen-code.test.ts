// The real Qwen Code CLI, installed from the npm registry, in headless mode
// (`qwen -p`) through a `cachebreak proxy` process to a mock OpenAI-compatible
// Chat Completions API whose cache reads what a real prompt cache would (the
// longest leading run of tools, system and messages sent before). Two
// sessions, each with its own session header from its project's settings:
// one resumed after QWEN.md was written, one resumed with a tool excluded.
// Qwen Code also runs a memory-extraction side call after every turn, over
// the conversation under a system prompt and tools of its own: it keeps a
// stream of its own and never breaks the conversation's. Nothing of the key,
// the prompts or the system prompt reaches the database.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { breaksOf, turnsOf, type WireBreak } from '../e2e/api.js';
import { startServer } from '../e2e/server.js';
import { tempDir } from '../helpers.js';
import { byAgent, installHarness, type NpmHarness } from './npm-harness.js';
import { chatAnswer, mockUpstream, promptCache } from './upstreams.js';
import { pause, waitFor } from './wait.js';

const VERSION = '0.24.4';
const KEY = 'sk-qwen-E2EKEYVALUE0000';
const MODEL = 'qwen3-coder-plus';
const PROMPTS = ['PROMPT-ONE-SECRET: say hello', 'PROMPT-TWO-SECRET: say hello again'];
const RUN_TIMEOUT_MS = 60_000;

interface ChatRequest {
  messages: { role: string; content: unknown }[];
  tools?: { function: { name: string } }[];
}
interface QwenEvent {
  type: string;
  session_id: string;
  is_error?: boolean;
  result?: string;
}

const toolsOf = (request: ChatRequest) => (request.tools ?? []).map((tool) => tool.function.name);
const systemOf = (request: ChatRequest) => String(request.messages.find((m) => m.role === 'system')?.content ?? '');
/** Qwen Code's own conversation, not its memory-extraction side call. */
const isMain = (request: ChatRequest) => systemOf(request).startsWith('You are Qwen Code');

let qwen: NpmHarness;
beforeAll(async () => {
  qwen = await installHarness('@qwen-code/qwen-code', VERSION, '@qwen-code/qwen-code/cli-entry.js');
}, 200_000);

describe('Qwen Code through cachebreak proxy', () => {
  it('a QWEN.md edit is one system_changed break of its conversation, a tool excluded a tools break naming it, and two sessions none across', async () => {
    const cache = promptCache();
    const upstream = await mockUpstream((request) => {
      const body = JSON.parse(request.body.toString()) as ChatRequest;
      const { prompt, cached } = cache([body.tools ?? [], ...body.messages]);
      return chatAnswer(request, { prompt_tokens: prompt, prompt_tokens_details: { cached_tokens: cached } });
    });
    try {
      const server = await startServer({ command: 'proxy', args: ['--openai-upstream', upstream.url] });
      const home = tempDir();
      // A fresh HOME: no settings, credentials or history of the machine; no telemetry, statistics or update checks.
      mkdirSync(join(home, '.qwen'));
      writeFileSync(
        join(home, '.qwen', 'settings.json'),
        JSON.stringify({ telemetry: { enabled: false }, privacy: { usageStatisticsEnabled: false }, general: { disableAutoUpdate: true, disableUpdateNag: true } }),
      );
      const env = { PATH: process.env.PATH, HOME: home, OPENAI_BASE_URL: `${server.proxyUrl}/openai/v1`, OPENAI_API_KEY: KEY, OPENAI_MODEL: MODEL };
      /** A project whose settings send its own session header, as docs/proxy.md says. */
      const project = (session: string) => {
        const dir = tempDir();
        mkdirSync(join(dir, '.qwen'));
        writeFileSync(join(dir, '.qwen', 'settings.json'), JSON.stringify({ model: { generationConfig: { customHeaders: { 'x-cachebreak-session': session } } } }));
        return dir;
      };
      const turn = async (cwd: string, args: string[]) => {
        const run = await qwen.run(['--auth-type', 'openai', '--output-format', 'json', ...args], { cwd, env, timeoutMs: RUN_TIMEOUT_MS });
        if (run.code !== 0) throw new Error(`${qwen.spec} exited ${run.code ?? run.signal}; stderr:\n${run.stderr.slice(-2000)}\nstdout:\n${run.stdout.slice(-2000)}`);
        const result = (JSON.parse(run.stdout) as QwenEvent[]).at(-1)!;
        expect(result).toMatchObject({ type: 'result', is_error: false, result: 'Hello!' });
        return result.session_id;
      };
      const calls = async (count: number) => {
        await waitFor('the calls stored', async () => (await fetch(`${server.url}/metrics`)).text(), (text) => text.includes(`outcome="turn"} ${count}`));
        return upstream.received.map((r) => JSON.parse(r.body.toString()) as ChatRequest);
      };

      // Session A: a turn, QWEN.md written, the conversation resumed.
      const edited = project('qwen-edited');
      const idA = await turn(edited, [PROMPTS[0]!, '--session-id', 'a1a1a1a1-0000-4000-8000-000000000001']);
      writeFileSync(join(edited, 'QWEN.md'), '# Project notes\nAlways answer in one word.\n');
      expect(await turn(edited, [PROMPTS[1]!, '--resume', idA])).toBe(idA);
      // Session B: a turn, then resumed without the glob tool.
      const excluded = project('qwen-excluded');
      const idB = await turn(excluded, [PROMPTS[0]!, '--session-id', 'b2b2b2b2-0000-4000-8000-000000000002']);
      await pause(50);
      expect(await turn(excluded, [PROMPTS[1]!, '--resume', idB, '--exclude-tools', 'glob'])).toBe(idB);

      // Each turn is the conversation's call and a memory-extraction call, with the key.
      const requests = await calls(8);
      expect(requests.map(isMain)).toEqual([true, false, true, false, true, false, true, false]);
      expect(upstream.received.every((r) => r.url === '/v1/chat/completions' && r.headers.authorization === `Bearer ${KEY}` && r.headers['x-cachebreak-session'] === undefined)).toBe(true);
      const [a1, memoryA1, a2, memoryA2, b1, , b2, memoryB2] = requests;
      expect(systemOf(a2!)).toContain('Always answer in one word.');
      expect(systemOf(a1!)).not.toContain('Always answer in one word.');
      expect(toolsOf(b1!)).toContain('glob');
      expect(toolsOf(b2!)).not.toContain('glob');
      expect(toolsOf(memoryB2!)).not.toContain('glob');

      const breaks = await waitFor('the breaks', () => breaksOf(server.url), (found) => found.length >= 2);
      await pause(300);
      const all = await breaksOf(server.url);
      const of = (session: string) => all.filter((b: WireBreak) => b.sessionId === session).map((b) => ({ agentId: b.agentId, reason: b.reason, changedToolNames: b.changedToolNames, changedSystemBlocks: b['changedSystemBlocks'] })).sort(byAgent);
      const [turnsA, turnsB] = [await turnsOf(server.url, 'qwen-edited'), await turnsOf(server.url, 'qwen-excluded')];
      // Session A: QWEN.md is in the system prompt of both the conversation and the memory extraction:
      // each breaks once on it, in its own stream.
      expect(systemOf(memoryA2!)).toContain('Always answer in one word.');
      expect(systemOf(memoryA1!)).not.toContain('Always answer in one word.');
      const [main, memory] = [turnsA[0]!.agentId, turnsA[1]!.agentId];
      expect(memory).not.toBe(main);
      expect(turnsA.map((t) => [t.agentId, t.state])).toEqual([[main, 'cold'], [memory, 'cold'], [main, 'miss'], [memory, 'miss']]);
      expect(of('qwen-edited')).toEqual([
        { agentId: main, reason: 'system_changed', changedToolNames: [], changedSystemBlocks: [0] },
        { agentId: memory, reason: 'system_changed', changedToolNames: [], changedSystemBlocks: [0] },
      ].sort(byAgent));
      // Session B: excluding glob removes it from the tools of both, and each breaks on it, naming glob.
      // The resumed conversation's system prompt (it names its tools) and first message (rebuilt on
      // --resume) changed too: it is still its conversation, by the messages it carries again after the first.
      const [mainB, memoryB] = [turnsB[0]!.agentId, turnsB[1]!.agentId];
      expect(turnsB.map((t) => t.agentId)).toEqual([mainB, memoryB, mainB, memoryB]);
      expect(of('qwen-excluded')).toEqual(
        [
          { agentId: mainB, reason: 'tools_schema_changed', changedToolNames: ['glob'], changedSystemBlocks: [0] },
          { agentId: memoryB, reason: 'tools_schema_changed', changedToolNames: ['glob'], changedSystemBlocks: null },
        ].sort(byAgent),
      );
      expect(breaks.length).toBe(all.length);
      // No break across sessions: each session's first calls are cold or read what the other wrote, never judged against it.
      expect([turnsA[0], turnsA[1], turnsB[0], turnsB[1]].map((t) => t!.break)).toEqual([null, null, null, null]);

      await server.stop();
      const stored = [server.db, `${server.db}-wal`].filter(existsSync).map((path) => readFileSync(path).toString('latin1')).join('');
      for (const secret of [KEY, ...PROMPTS, 'Always answer in one word', systemOf(a1!).slice(0, 60)]) expect(stored).not.toContain(secret);
    } finally {
      await upstream.close();
    }
  }, 200_000);
});
