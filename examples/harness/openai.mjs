// A harness on the openai SDK (Chat Completions, streamed) that watches its
// own prompt cache in process: a Detector judges every call, and each break
// goes to a callback of the harness's own. No server needed.
//
//   OPENAI_API_KEY=… node examples/harness/openai.mjs
import OpenAI from 'openai';
import { breakLine, Detector, withCachebreak } from 'cachebreak/detector';

const breaks = [];
const detector = new Detector({ onBreak: (record) => breaks.push(record) });
const fetch = withCachebreak(globalThis.fetch, { detector, sessionId: 'example-openai' });
const openai = new OpenAI({ fetch, maxRetries: 0 });

const tool = (name) => ({ type: 'function', function: { name, description: `The ${name} tool.`, parameters: { type: 'object', properties: {} } } });
const messages = [
  { role: 'system', content: 'You are a careful coding agent.' },
  { role: 'user', content: 'List the files.' },
];

// The second call sends the same tools in another order: the cached prefix differs from its first byte on.
for (const tools of [[tool('read_file'), tool('shell')], [tool('shell'), tool('read_file')]]) {
  const stream = await openai.chat.completions.create({ model: 'gpt-4o', messages, tools, stream: true, stream_options: { include_usage: true } });
  for await (const chunk of stream) process.stdout.write(chunk.choices[0]?.delta.content ?? '');
  process.stdout.write('\n');
}

await fetch.idle();
for (const record of breaks) console.error(breakLine(record));
console.log(`${breaks.length} break(s): ${breaks.map((b) => `${b.reason} (${b.changedToolNames.join(', ')})`).join('; ')}`);
