// Qwen Code's OpenAI request logs (model.enableOpenAILogging): one JSON file
// per call, written whole into logs/openai/ as the call ends. Followed as they
// appear, each becomes a turn with the full snapshot of its request.
import { copyFileSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { detectFormat } from '../../src/ingest/tail/formats/index.js';
import { LOGS_IN_PROJECT_NOTICE } from '../../src/ingest/tail/formats/qwen-openai.js';
import { freshStore, tempDir } from '../helpers.js';
import { follow, turnStates, waitFor } from './harness.js';

const SESSION = '9c2e4a6b-8d0f-4b2c-a4e6-1f3b5d7e9a0c';
const FIXTURES = new URL('../fixtures/qwen-openai/', import.meta.url);
const FILES = readdirSync(FIXTURES).sort();

describe('Qwen Code OpenAI request logs', () => {
  it('are told apart from a telemetry outfile by their first keys', () => {
    for (const name of FILES) expect(detectFormat(readFileSync(new URL(name, FIXTURES)), `/p/logs/openai/${name}`)).toBe('qwen-openai');
    const outfile = readFileSync(new URL('../fixtures/otel-file/qwen-code-0.24.4.log', import.meta.url));
    expect(detectFormat(outfile, '/p/.qwen/telemetry.log')).toBe('otel-file');
  });

  it('followed as Qwen Code writes them, name the tool added between two calls', async () => {
    const dir = tempDir();
    const tailed = freshStore();
    const following = await follow(tailed, [join(dir, 'openai-*.json')]);
    for (const name of FILES) {
      copyFileSync(new URL(name, FIXTURES), join(dir, name));
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const states = await waitFor('three turns', async () => {
      const got = await turnStates(tailed, [SESSION]);
      return Object.keys(got).length === 3 ? got : undefined;
    });
    await following.tailer.settled();
    expect(following.rejected).toEqual([]);
    expect(following.notices.filter((n) => n.includes(LOGS_IN_PROJECT_NOTICE))).toEqual([]);
    expect(states).toEqual({ 'chatcmpl-a1': 'cold', 'chatcmpl-a2': 'hit', 'chatcmpl-a3': 'miss' });
    const { items } = await tailed.breaks('default', {}, {}, { limit: 10 });
    expect(items).toEqual([
      expect.objectContaining({
        requestId: 'chatcmpl-a3',
        previousRequestId: 'chatcmpl-a2',
        agentId: 'main',
        reason: 'tools_schema_changed',
        reasons: ['tools_schema_changed'],
        changedToolNames: ['mcp__tracker__search_issues'],
        currentCacheReadTokens: 0,
      }),
    ]);
    const stored = JSON.stringify(items) + JSON.stringify(await tailed.sessionTurns('default', SESSION));
    for (const secret of ['retry budget', 'Search the issue tracker', 'PaymentClient', 'npm test']) expect(stored).not.toContain(secret);
  });

  it('counts a failed call (no response) as ignored, and names what a broken file lacks', async () => {
    const dir = tempDir();
    const good = JSON.parse(readFileSync(new URL(FILES[0]!, FIXTURES), 'utf8')) as Record<string, unknown>;
    writeFileSync(join(dir, 'openai-1-failed.json'), JSON.stringify({ ...good, response: null, error: { message: 'Request timed out' } }, null, 2));
    writeFileSync(join(dir, 'openai-2-nosession.json'), JSON.stringify({ ...good, context: null }, null, 2));
    writeFileSync(join(dir, 'openai-3-good.json'), JSON.stringify(good, null, 2));
    const tailed = freshStore();
    const following = await follow(tailed, [join(dir, 'openai-*.json')], { fromStart: true });
    await waitFor('the good call', async () => (Object.keys(await turnStates(tailed, [SESSION])).length === 1 ? true : undefined));
    await following.tailer.settled();
    expect(following.rejected).toEqual([`${join(dir, 'openai-2-nosession.json')}:1: context.sessionId: required to place the call in a session`]);
  });

  it('warns once per directory when the project listing Qwen Code sends shows its own log files', async () => {
    const dir = tempDir();
    const good = JSON.parse(readFileSync(new URL(FILES[0]!, FIXTURES), 'utf8')) as { request: { messages: { role: string; content: unknown }[] } };
    const listing = 'Showing up to 200 items (files + folders).\n/p/\n├───logs/\n│   └───openai/\n│       └───openai-2026-12-02T09-00-04.210Z-a10f3c9e.json\n└───src/';
    const listed = structuredClone(good);
    listed.request.messages.splice(1, 0, { role: 'user', content: [{ type: 'text', text: listing }] });
    for (const [i, id] of ['chatcmpl-l1', 'chatcmpl-l2'].entries()) {
      writeFileSync(join(dir, `openai-${i}.json`), JSON.stringify({ ...listed, response: { ...(listed as unknown as { response: object }).response, id } }, null, 2));
    }
    const tailed = freshStore();
    const following = await follow(tailed, [join(dir, 'openai-*.json')], { fromStart: true });
    await waitFor('both calls', async () => (Object.keys(await turnStates(tailed, [SESSION])).length === 2 ? true : undefined));
    await following.tailer.settled();
    expect(following.notices.filter((n) => n.includes(LOGS_IN_PROJECT_NOTICE))).toEqual([`${join(dir, 'openai-0.json')}: ${LOGS_IN_PROJECT_NOTICE}`]);
    // The listing is hashed like any message: it never reaches the store.
    expect(JSON.stringify(await tailed.sessionTurns('default', SESSION))).not.toContain('Showing up to');
  });
});
