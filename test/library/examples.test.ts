// examples/harness/ runs as a harness author would run it: each script with
// node, importing the built package by name (cachebreak/detector,
// cachebreak/client), its SDK pointed by the SDK's own environment variable
// at a mock upstream, and the anthropic example sending to a real server.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { breaksOf } from '../e2e/api.js';
import { startServer } from '../e2e/server.js';
import { anthropicAnswer, chatAnswer, mockUpstream, type MockUpstream } from '../proxy/upstreams.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const run = promisify(execFile);

const mocks: MockUpstream[] = [];
afterEach(async () => {
  for (const mock of mocks.splice(0)) await mock.close();
});

/** Runs an example with only the environment given (and PATH), bounded. */
async function example(name: string, env: Record<string, string>): Promise<{ stdout: string; stderr: string }> {
  if (!existsSync(`${ROOT}dist/detector/index.js`)) throw new Error('dist/detector is missing: run "npm run build" first (npm test does)');
  return run(process.execPath, [`examples/harness/${name}`], { cwd: ROOT, env: { PATH: process.env.PATH ?? '', ...env }, timeout: 30_000 });
}

describe('examples/harness', () => {
  it('anthropic.mjs: the break on stderr, and the turns on the server, which finds the same break', { timeout: 60_000 }, async () => {
    const upstream = await mockUpstream((request) => anthropicAnswer(request, { input_tokens: 12, cache_creation_input_tokens: 10_000, cache_read_input_tokens: 0 }, 'req_x'));
    mocks.push(upstream);
    const server = await startServer();
    const { stdout, stderr } = await example('anthropic.mjs', { ANTHROPIC_BASE_URL: upstream.url, ANTHROPIC_API_KEY: 'sk-ant-example', CACHEBREAK_URL: server.url });
    expect(stdout).toContain('Hello!');
    expect(stdout).toContain('sent 2 turns to cachebreak');
    expect(stderr).toMatch(/event=prompt_cache_break reason=tools_schema_changed session=example-anthropic .*changedToolNames=shell/);
    const stored = await breaksOf(server.url);
    expect(stored.map((b) => [b.sessionId, b.reason, b.changedToolNames])).toEqual([['example-anthropic', 'tools_schema_changed', ['shell']]]);
  });

  it('openai.mjs: the re-ordered tools judged in process', { timeout: 60_000 }, async () => {
    const upstream = await mockUpstream((request) => chatAnswer(request, { prompt_tokens: 5_000, prompt_tokens_details: { cached_tokens: 0 } }));
    mocks.push(upstream);
    const { stdout, stderr } = await example('openai.mjs', { OPENAI_BASE_URL: `${upstream.url}/v1`, OPENAI_API_KEY: 'sk-example' });
    expect(stdout).toContain('1 break(s): tools_order_changed (read_file, shell)');
    expect(stderr).toMatch(/event=prompt_cache_break reason=tools_order_changed session=example-openai/);
  });

  it('request-by-hand.mjs: snapshot before, usage after, a system block changed', async () => {
    const { stdout } = await example('request-by-hand.mjs', {});
    expect(stdout).toMatch(/^req_1: cold\n.*event=prompt_cache_break reason=system_changed session=by-hand .*changedSystemBlocks=1 .*\nreq_2: miss\n$/);
  });
});
