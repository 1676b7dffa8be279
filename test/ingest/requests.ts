// What the ingest tests send: a turn event with a miss's counts, and a JSON
// POST to a test server, answered as status and body.
import { T0 } from '../e2e/events.js';
import type { TestServer } from '../otlp/harness.js';

export const turn = (requestId: string, sessionId: string, fields: Record<string, unknown> = {}) => ({
  type: 'turn',
  requestId,
  sessionId,
  ts: T0,
  model: 'claude-sonnet-4-5',
  provider: 'anthropic',
  uncachedInputTokens: 5_000,
  cacheReadInputTokens: 0,
  ...fields,
});

export async function send(server: TestServer, path: string, body: unknown) {
  const response = await fetch(`${server.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}
