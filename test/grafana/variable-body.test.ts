// POST /grafana/json/variable with the body the API reference (docs/api.md) shows ({"target": "model"})
// and with the one the simPod datasource sends, against a real server process.
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { postEvents, request, startServer } from '../e2e/server.js';

const API_REFERENCE = new URL('../../docs/api.md', import.meta.url);

const turn = (requestId: string, model: string) => ({
  type: 'turn',
  requestId,
  sessionId: 's1',
  ts: Date.now() - 60_000,
  provider: 'anthropic',
  model,
  usage: { input_tokens: 10, cache_read_input_tokens: 0, cache_creation_input_tokens: 100, output_tokens: 1 },
});

describe('POST /grafana/json/variable', () => {
  it('answers the documented body and simPod\'s body with the models seen', async () => {
    const documentedBody = /`POST \/grafana\/json\/variable` — simPod: values of a dimension as \[\{__text, __value\}\]; the body (\{"target": "model"\})/.exec(readFileSync(API_REFERENCE, 'utf8'))?.[1];
    expect(documentedBody).toBeDefined();
    const server = await startServer();
    expect((await postEvents(server.url, [turn('r1', 'claude-sonnet-4-5'), turn('r2', 'claude-opus-4-1')])).body).toMatchObject({ accepted: 2 });
    const expected = [
      { __text: 'claude-opus-4-1', __value: 'claude-opus-4-1' },
      { __text: 'claude-sonnet-4-5', __value: 'claude-sonnet-4-5' },
    ];
    for (const body of [documentedBody!, JSON.stringify({ payload: { target: 'model' }, range: { from: new Date(Date.now() - 3_600_000).toISOString(), to: new Date().toISOString() } })]) {
      const reply = await request(server.url, '/grafana/json/variable', { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      expect(reply.status, `${body}: ${reply.text}`).toBe(200);
      expect(reply.body).toEqual(expected);
    }
  });
});
