// The real Gemini CLI, installed from the npm registry, in headless mode
// (`gemini -p`) through a `cachebreak proxy` process to a mock Gemini API
// (generateContent and streamGenerateContent) whose cache reads what a real
// prompt cache would (the longest leading run of system instruction, tools
// and contents sent before). Before each turn Gemini CLI asks a flash-lite
// router to score the prompt: a lane of its own, on another model. Two
// sessions, each with its own session header (GEMINI_CLI_CUSTOM_HEADERS):
// one resumed after ~/.gemini/GEMINI.md was written, one resumed with a tool
// excluded in its settings. Nothing of the key, the prompts or the system
// instruction reaches the database.
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { breaksOf, sessionsOf, turnsOf, type WireBreak } from '../e2e/api.js';
import { startServer } from '../e2e/server.js';
import { tempDir } from '../helpers.js';
import { byAgent, installHarness, type NpmHarness } from './npm-harness.js';
import { geminiAnswer, mockUpstream, promptCache } from './upstreams.js';
import { waitFor } from './wait.js';

const VERSION = '0.61.0';
const KEY = 'AIzaSyE2EKEYVALUE0000000000000000000';
const PROMPTS = ['PROMPT-ONE-SECRET: say hello', 'PROMPT-TWO-SECRET: say hello again'];
const RUN_TIMEOUT_MS = 60_000;
const NOTE = 'Always answer in one word.';

interface GenerateRequest {
  systemInstruction?: { parts: { text: string }[] };
  tools?: { functionDeclarations?: { name: string }[] }[];
  contents: unknown[];
  generationConfig?: unknown;
}
interface GeminiResult {
  session_id: string;
  response: string;
}

const toolsOf = (request: GenerateRequest) => (request.tools ?? []).flatMap((tool) => (tool.functionDeclarations ?? []).map((f) => f.name));
const systemOf = (request: GenerateRequest) => (request.systemInstruction?.parts ?? []).map((part) => part.text).join('');
/** The router's call: it asks for a complexity score as JSON. */
const isRouter = (request: GenerateRequest) => JSON.stringify(request.generationConfig ?? {}).includes('complexity_score');
/** What the mock model says: the router's score, else a greeting. */
const answerText = (request: GenerateRequest) => (isRouter(request) ? JSON.stringify({ complexity_reasoning: 'A greeting.', complexity_score: 5 }) : 'Hello!');

/** Gemini CLI's environment to call through the proxy at `proxyUrl`, naming `session` in its headers. */
const proxiedEnv = (proxyUrl: string | undefined, homeDir: string, session: string) => ({
  PATH: process.env.PATH,
  HOME: homeDir,
  GOOGLE_GEMINI_BASE_URL: `${proxyUrl}/gemini`,
  GEMINI_API_KEY: KEY,
  GEMINI_CLI_CUSTOM_HEADERS: `x-cachebreak-session: ${session}`,
});

/** A fresh HOME per session: no credentials or history of the machine; no statistics or update checks; telemetry off unless given. */
function home(settings: Record<string, unknown> = {}): string {
  const dir = tempDir();
  mkdirSync(join(dir, '.gemini'));
  writeFileSync(
    join(dir, '.gemini', 'settings.json'),
    JSON.stringify({
      security: { auth: { selectedType: 'gemini-api-key' } },
      telemetry: { enabled: false },
      privacy: { usageStatisticsEnabled: false },
      general: { disableAutoUpdate: true, disableUpdateNag: true },
      ...settings,
    }),
  );
  return dir;
}

let gemini: NpmHarness;
beforeAll(async () => {
  gemini = await installHarness('@google/gemini-cli', VERSION, '@google/gemini-cli/bundle/gemini.js');
}, 200_000);

describe('Gemini CLI through cachebreak proxy', () => {
  it('a GEMINI.md edit is one system_changed break of its conversation, a tool excluded a tools break naming it, and neither the router lane nor a second session breaks', async () => {
    const cache = promptCache();
    const upstream = await mockUpstream((request) => {
      const body = JSON.parse(request.body.toString()) as GenerateRequest;
      const { prompt, cached } = cache([body.systemInstruction ?? null, body.tools ?? [], ...body.contents]);
      const usage = { promptTokenCount: prompt, ...(cached > 0 ? { cachedContentTokenCount: cached } : {}) };
      return geminiAnswer(request, usage, answerText(body));
    });
    try {
      const server = await startServer({ command: 'proxy', args: ['--gemini-upstream', upstream.url] });
      const turn = async (session: string, homeDir: string, cwd: string, args: string[]) => {
        const env = proxiedEnv(server.proxyUrl, homeDir, session);
        const run = await gemini.run(['--skip-trust', '--output-format', 'json', ...args], { cwd, env, timeoutMs: RUN_TIMEOUT_MS });
        if (run.code !== 0) throw new Error(`${gemini.spec} exited ${run.code ?? run.signal}; stderr:\n${run.stderr.slice(-2000)}\nstdout:\n${run.stdout.slice(-2000)}`);
        const result = JSON.parse(run.stdout) as GeminiResult;
        expect(result.response).toBe('Hello!');
        return result.session_id;
      };

      // Session A: a turn, ~/.gemini/GEMINI.md written, the conversation resumed.
      const [homeA, workA] = [home(), tempDir()];
      const idA = await turn('gemini-edited', homeA, workA, ['-p', PROMPTS[0]!]);
      writeFileSync(join(homeA, '.gemini', 'GEMINI.md'), `# Notes\n${NOTE}\n`);
      expect(await turn('gemini-edited', homeA, workA, ['-p', PROMPTS[1]!, '--resume', 'latest'])).toBe(idA);
      // Session B: a turn, then resumed with glob excluded in its settings.
      const [homeB, workB] = [home(), tempDir()];
      const idB = await turn('gemini-excluded', homeB, workB, ['-p', PROMPTS[0]!]);
      const settingsB = JSON.parse(readFileSync(join(homeB, '.gemini', 'settings.json'), 'utf8')) as Record<string, unknown>;
      writeFileSync(join(homeB, '.gemini', 'settings.json'), JSON.stringify({ ...settingsB, tools: { exclude: ['glob'] } }));
      expect(await turn('gemini-excluded', homeB, workB, ['-p', PROMPTS[1]!, '--resume', 'latest'])).toBe(idB);

      // Each turn is a router call then the conversation's call, with the key.
      await waitFor('the calls stored', async () => (await fetch(`${server.url}/metrics`)).text(), (text) => text.includes('outcome="turn"} 8'));
      const requests = upstream.received.map((r) => JSON.parse(r.body.toString()) as GenerateRequest);
      expect(requests.map(isRouter)).toEqual([true, false, true, false, true, false, true, false]);
      expect(upstream.received.every((r) => r.headers['x-goog-api-key'] === KEY && r.headers['x-cachebreak-session'] === undefined)).toBe(true);
      const [, a1, , a2, , b1, , b2] = requests;
      expect([systemOf(a1!).includes(NOTE), systemOf(a2!).includes(NOTE)]).toEqual([false, true]);
      expect([toolsOf(b1!).includes('glob'), toolsOf(b2!).includes('glob')]).toEqual([true, false]);

      const all = await waitFor('the breaks', () => breaksOf(server.url), (found) => found.length >= 2);
      const of = (session: string) =>
        all
          .filter((b: WireBreak) => b.sessionId === session)
          .map((b) => ({ agentId: b.agentId, reason: b.reason, changedToolNames: b.changedToolNames }))
          .sort(byAgent);
      const [turnsA, turnsB] = [await turnsOf(server.url, 'gemini-edited'), await turnsOf(server.url, 'gemini-excluded')];
      const [router, main] = [turnsA[0]!.agentId, turnsA[1]!.agentId];
      expect(router).not.toBe(main);
      expect(turnsA.map((t) => t.agentId)).toEqual([router, main, router, main]);
      expect(of('gemini-edited')).toEqual([{ agentId: main, reason: 'system_changed', changedToolNames: [] }]);
      expect(turnsB.map((t) => t.agentId)).toEqual([turnsB[0]!.agentId, turnsB[1]!.agentId, turnsB[0]!.agentId, turnsB[1]!.agentId]);
      expect(of('gemini-excluded')).toEqual([{ agentId: turnsB[1]!.agentId, reason: 'tools_schema_changed', changedToolNames: ['glob'] }]);
      // No break across sessions: session B's first calls read what session A wrote, or are cold, never judged against it.
      expect([turnsB[0]!.break, turnsB[1]!.break]).toEqual([null, null]);

      await server.stop();
      const stored = [server.db, `${server.db}-wal`].filter(existsSync).map((path) => readFileSync(path).toString('latin1')).join('');
      for (const secret of [KEY, ...PROMPTS, NOTE, systemOf(a1!).slice(0, 60)]) expect(stored).not.toContain(secret);
    } finally {
      await upstream.close();
    }
  }, 200_000);
  it('with its OTLP sent to the same server, each call is one turn, in the session of --session-id, with the proxy snapshot', async () => {
    const cache = promptCache();
    let answered = 0;
    const prompts: number[] = [];
    const upstream = await mockUpstream((request) => {
      const body = JSON.parse(request.body.toString()) as GenerateRequest;
      const { prompt, cached } = cache([body.systemInstruction ?? null, body.tools ?? [], ...body.contents]);
      const usage = { promptTokenCount: prompt, ...(cached > 0 ? { cachedContentTokenCount: cached } : {}) };
      prompts.push(prompt);
      return geminiAnswer(request, usage, answerText(body), `answer-${++answered}`);
    });
    try {
      const server = await startServer({ command: 'proxy', args: ['--gemini-upstream', upstream.url] });
      const session = randomUUID();
      const homeDir = home({ telemetry: { enabled: true, target: 'local', otlpEndpoint: server.url, otlpProtocol: 'http' } });
      const env = proxiedEnv(server.proxyUrl, homeDir, session);
      const run = await gemini.run(['--skip-trust', '--output-format', 'json', '--session-id', session, '-p', PROMPTS[0]!], { cwd: tempDir(), env, timeoutMs: RUN_TIMEOUT_MS });
      if (run.code !== 0) throw new Error(`${gemini.spec} exited ${run.code ?? run.signal}; stderr:\n${run.stderr.slice(-2000)}`);
      expect((JSON.parse(run.stdout) as GeminiResult).session_id).toBe(session);
      // The router's call and the conversation's.
      expect(upstream.received).toHaveLength(2);

      /** The sum of the series of `name` whose labels include `labels`. */
      const metric = async (name: string, labels: string) => {
        const lines = (await (await fetch(`${server.url}/metrics`)).text()).split('\n').filter((l) => l.startsWith(`${name}{`) && l.includes(labels));
        return lines.reduce((sum, line) => sum + Number(line.split(' ').at(-1)), 0);
      };
      // Both sources reached the server: the proxy's two turns, and per call the OTLP usage, the logs' snapshot and the span's.
      await waitFor('the proxy turns', () => metric('cachebreak_proxy_observations_total', 'outcome="turn"'), (n) => n === 2);
      await waitFor('the OTLP events of both calls', () => metric('cachebreak_events_total', 'receiver="otlp_http"'), (n) => n >= 6);
      const text = await (await fetch(`${server.url}/metrics`)).text();
      expect(text).not.toMatch(/cachebreak_events_total\{[^}]*outcome="rejected"[^}]*\} [1-9]/);
      expect(text).not.toMatch(/cachebreak_proxy_observations_total\{[^}]*outcome="rejected"[^}]*\} [1-9]/);

      const sessions = await sessionsOf(server.url);
      expect(sessions.map((s) => s.sessionId)).toEqual([session]);
      const stored = await turnsOf(server.url, session);
      expect(stored.map((t) => t.requestId)).toEqual(['answer-1', 'answer-2']);
      // Named by the proxy's lineage (a stream per system prompt), not by the telemetry's role: the proxy's snapshot.
      expect(stored.every((t) => t.agentId.startsWith('system-'))).toBe(true);
      expect(stored.map((t) => t.model)).toEqual(upstream.received.map((r) => /\/models\/([^/:]+):/.exec(r.url)?.[1]));
      // Each call's prompt, counted once.
      expect(stored.map((t) => t.usage!.uncached + t.usage!.read)).toEqual(prompts);
      await server.stop();
    } finally {
      await upstream.close();
    }
  }, 200_000);
});
