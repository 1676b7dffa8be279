// A harness on @anthropic-ai/sdk that watches its own prompt cache: every
// call goes through withCachebreak(fetch), each break is written to stderr
// as a prompt_cache_break line, and every turn is sent to a cachebreak server.
//
//   CACHEBREAK_URL=http://127.0.0.1:4318 ANTHROPIC_API_KEY=… node examples/harness/anthropic.mjs
import Anthropic from '@anthropic-ai/sdk';
import { CachebreakClient } from 'cachebreak/client';
import { logfmtEmitter, withCachebreak } from 'cachebreak/detector';

const cachebreak = new CachebreakClient({ url: process.env.CACHEBREAK_URL ?? 'http://127.0.0.1:4318', onError: (failure) => console.error(failure.message) });
const emit = logfmtEmitter();
const fetch = withCachebreak(globalThis.fetch, {
  sessionId: 'example-anthropic',
  sink: cachebreak,
  onTurn: (turn) => turn.break && emit(turn.break),
});
const anthropic = new Anthropic({ fetch, maxRetries: 0 });

const readFile = { name: 'read_file', description: 'Reads a file.', input_schema: { type: 'object', properties: { path: { type: 'string' } } } };
const shell = { name: 'shell', description: 'Runs a command.', input_schema: { type: 'object', properties: { command: { type: 'string' } } } };
const system = [{ type: 'text', text: 'You are a careful coding agent.', cache_control: { type: 'ephemeral' } }];
const messages = [{ role: 'user', content: 'List the files.' }];

// Turn 1 writes the cache; turn 2 adds a tool after an MCP server connected, which breaks it.
await anthropic.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 200, system, tools: [readFile], messages });
const stream = anthropic.messages.stream({ model: 'claude-sonnet-4-5', max_tokens: 200, system, tools: [readFile, shell], messages });
console.log((await stream.finalMessage()).content.map((block) => block.text ?? '').join(''));

await fetch.idle();
await cachebreak.shutdown();
console.log(`sent ${cachebreak.stats.accepted} turns to cachebreak`);
