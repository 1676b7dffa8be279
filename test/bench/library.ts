// The detector library's cost per model call, inside a harness (one core):
// the snapshot of a 100-tool request, the usage of its answer, and the
// judgement, each beside JSON.stringify of the same body in the same run
// (which an SDK does once per call anyway).
import { Detector, snapshotFromRequest, usageFromResponse } from '../../src/detector/index.js';
import { toolDefinitions } from './core.js';
import { throughput, type Row } from './lib.js';

/** A Claude Code-like request: 100 tools, a two-block system prompt, 40 messages. */
function requestBody() {
  return {
    model: 'claude-sonnet-4-5',
    max_tokens: 8192,
    system: [
      { type: 'text', text: 'x-anthropic-billing-header: cc_version=2.0.50' },
      { type: 'text', text: 'You are a coding agent. '.repeat(200), cache_control: { type: 'ephemeral' } },
    ],
    tools: toolDefinitions(),
    messages: Array.from({ length: 40 }, (_, i) => ({
      role: i % 2 === 0 ? 'user' : 'assistant',
      content: [{ type: 'text', text: `Message ${i}: `.padEnd(400, 'lorem ipsum '), ...(i === 39 ? { cache_control: { type: 'ephemeral' } } : {}) }],
    })),
  };
}

const RESPONSE = { id: 'msg_1', type: 'message', usage: { input_tokens: 12, cache_read_input_tokens: 48_000, cache_creation_input_tokens: 900, output_tokens: 310 } };

export function benchLibrary(): Row[] {
  const body = requestBody();
  const stringify = throughput(() => JSON.stringify(body), 1);
  const baseline = { label: 'JSON.stringify of the same body', value: stringify };

  const snapshots = throughput(() => snapshotFromRequest('anthropic', body), 1);
  const snapshot = snapshotFromRequest('anthropic', body);
  const usage = usageFromResponse('anthropic', RESPONSE);
  let n = 0;
  const detector = new Detector();
  const observe = () => detector.observe({ requestId: `req_${n}`, sessionId: 's', ts: 1_000 * n++, provider: 'anthropic', snapshot, usage });
  const judged = throughput(observe, 1);
  const whole = new Detector();
  let m = 0;
  const perCall = throughput(() => {
    const turn = { requestId: `req_${m}`, sessionId: 's', ts: 1_000 * m++, provider: 'anthropic', snapshot: snapshotFromRequest('anthropic', body), usage: usageFromResponse('anthropic', RESPONSE) };
    whole.observe(turn);
  }, 1);
  const kib = (JSON.stringify(body).length / 1024).toFixed(0);

  return [
    { figure: `library: snapshotFromRequest, 100-tool Anthropic request (${kib} KiB)`, value: snapshots, unit: 'requests/s', baseline },
    { figure: 'library: Detector.observe, 100-tool snapshot, in order', value: judged, unit: 'requests/s', baseline },
    { figure: 'library: per call in all (snapshot + usage + observe)', value: perCall, unit: 'requests/s', baseline },
  ];
}
