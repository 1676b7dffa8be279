// POST /v1/events against a real server process: an invalid event is rejected
// with every problem of its fields in one answer, and keys the contract does
// not know are named back as warnings while the event is stored without them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postEvents, startServer, type ServerProcess } from './server.js';

let server: ServerProcess;
beforeAll(async () => {
  server = await startServer({ lifetime: 'file' });
});
afterAll(async () => {
  await server.stop();
});

const snapshot = (requestId: string, extra: Record<string, unknown> = {}) => ({
  type: 'snapshot',
  requestId,
  sessionId: 'sess_A',
  ts: Date.now() - 60_000,
  model: 'claude-sonnet-4-5',
  tools: [{ name: 'read_file', schemaHash: 'a1' }],
  ...extra,
});

describe('POST /v1/events: every problem at once', () => {
  it('rejects an event naming each bad field, not only the first', async () => {
    const reply = await postEvents(server.url, [
      { type: 'snapshot', requestId: 'r_bad', ts: 'yesterday', tools: [{ name: 'read_file' }], agentId: 7 },
      snapshot('r_good'),
    ]);
    expect(reply.status).toBe(200);
    const body = reply.body as { accepted: number; rejected: { index: number; field: string; error: string }[] };
    expect(body.accepted).toBe(1);
    expect(body.rejected).toHaveLength(1);
    const { index, error } = body.rejected[0]!;
    expect(index).toBe(0);
    const problems = error.split('; ');
    expect(problems).toEqual(
      expect.arrayContaining([
        'events[0].sessionId: required',
        'events[0].model: required',
        expect.stringMatching(/^events\[0\]\.ts: expected RFC 3339/),
        'events[0].tools[0].schemaHash: required',
        expect.stringMatching(/^events\[0\]\.agentId: expected string/),
      ]),
    );
    expect(problems).toHaveLength(5);
  });

  it('names unknown keys (in the order sent) as warnings, and accepts the event', async () => {
    const reply = await postEvents(server.url, [
      snapshot('r_typo', { modle: 'claude-opus-4-1', tools: [{ name: 'read_file', schemaHash: 'a1', descripton: 'x' }] }),
      snapshot('r_clean'),
    ]);
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({
      accepted: 2,
      duplicates: 0,
      rejected: [],
      warnings: [
        {
          index: 0,
          unknownKeys: ['tools[0].descripton', 'modle'],
          message: 'events[0]: unknown keys ignored: tools[0].descripton, modle (a typo? GET /v1/events/schema lists every field)',
        },
      ],
    });
  });

  it('answers as before, with no warnings field, when every key is known', async () => {
    const reply = await postEvents(server.url, [snapshot('r_plain')]);
    expect(reply.body).toEqual({ accepted: 1, duplicates: 0, rejected: [] });
  });
});
