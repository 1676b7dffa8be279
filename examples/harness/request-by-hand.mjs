// Without wrapping anything: a harness that already holds each request body
// and response hands them to the Detector itself, before and after the call.
//
//   node examples/harness/request-by-hand.mjs
import { Detector, logfmtEmitter, snapshotFromRequest, usageFromResponse } from 'cachebreak/detector';

const detector = new Detector({ onBreak: logfmtEmitter((line) => console.log(line)) });

// Two requests as a harness would send them; the second has a new date in its system prompt.
const body = (date) => ({
  model: 'claude-sonnet-4-5',
  max_tokens: 200,
  system: [{ type: 'text', text: 'You are a careful coding agent.' }, { type: 'text', text: `Today is ${date}.`, cache_control: { type: 'ephemeral' } }],
  messages: [{ role: 'user', content: 'List the files.' }],
});
const answer = (read, write) => ({ usage: { input_tokens: 12, cache_read_input_tokens: read, cache_creation_input_tokens: write, output_tokens: 40 } });

const start = Date.parse('2026-12-01T09:00:00Z');
for (const [i, [date, response]] of [['2026-11-30', answer(0, 24_000)], ['2026-12-01', answer(0, 24_100)]].entries()) {
  const snapshot = snapshotFromRequest('anthropic', body(date)); // before the call
  const usage = usageFromResponse('anthropic', response); // after it
  const turn = detector.observe({ requestId: `req_${i + 1}`, sessionId: 'by-hand', ts: start + i * 30_000, provider: 'anthropic', snapshot, usage });
  console.log(`req_${i + 1}: ${turn.state}`);
}
