// What the store refuses is one event's rejection, never the request's: a
// request id that already names a turn of another session is a conflict
// (never an overwrite), and an event whose write fails (here a trigger in the
// database refuses it) is reported while every other event of its request is
// stored, over HTTP and OTLP/HTTP alike.
import { describe, expect, it } from 'vitest';
import { T0 } from '../e2e/events.js';
import { freshDb, refuseTurns } from '../store-under-test.js';
import { startOtlpServer, type TestServer } from '../otlp/harness.js';
import { send, turn } from './requests.js';

async function turnsOf(server: TestServer, sessionId: string): Promise<{ requestId: string; ts: string; model: string }[]> {
  const response = await fetch(`${server.url}/v1/sessions/${sessionId}/turns`);
  return response.status === 404 ? [] : ((await response.json()) as { turns: { requestId: string; ts: string; model: string }[] }).turns;
}

/** An OTLP/HTTP JSON logs body of native records, one per event. */
function otlpLogs(events: Record<string, unknown>[]) {
  const logRecords = events.map(({ type, ...fields }) => ({
    eventName: `prompt_cache.${String(type)}`,
    attributes: Object.entries(fields).map(([key, value]) => ({ key, value: typeof value === 'number' ? { intValue: String(value) } : { stringValue: String(value) } })),
  }));
  return { resourceLogs: [{ resource: {}, scopeLogs: [{ scope: {}, logRecords }] }] };
}

const CONFLICT = 'already names a turn of session "s_a", not "s_b": request ids must be unique within a project';

describe('a request id of another session', () => {
  it('is rejected as a conflict, and the turn it names stays as it was', async () => {
    const server = await startOtlpServer();
    expect((await send(server, '/v1/events', [turn('r1', 's_a')])).body).toMatchObject({ accepted: 1, rejected: [] });
    const reply = await send(server, '/v1/events', [
      turn('r1', 's_b', { ts: T0 + 5_000, model: 'gpt-5' }),
      turn('r2', 's_b'),
      { type: 'usage', requestId: 'r1', sessionId: 's_b', uncachedInputTokens: 9, cacheReadInputTokens: 0 },
    ]);
    expect(reply).toEqual({
      status: 200,
      body: {
        accepted: 1,
        duplicates: 0,
        rejected: [
          { index: 0, field: 'requestId', error: `events[0].requestId: ${CONFLICT}` },
          { index: 2, field: 'requestId', error: `events[2].requestId: ${CONFLICT}` },
        ],
      },
    });
    expect(await turnsOf(server, 's_a')).toMatchObject([{ requestId: 'r1', ts: new Date(T0).toISOString(), model: 'claude-sonnet-4-5' }]);
    expect((await turnsOf(server, 's_b')).map((t) => t.requestId)).toEqual(['r2']);
  });

  it('within one request too, and over OTLP/HTTP', async () => {
    const server = await startOtlpServer();
    const reply = await send(server, '/v1/logs', otlpLogs([turn('r1', 's_a'), turn('r1', 's_b'), turn('r3', 's_b')]));
    expect(reply).toEqual({
      status: 200,
      body: { partialSuccess: { rejectedLogRecords: '1', errorMessage: `1 record(s) rejected: logs[1] (native): requestId: ${CONFLICT}` } },
    });
    expect((await turnsOf(server, 's_a')).map((t) => t.requestId)).toEqual(['r1']);
    expect((await turnsOf(server, 's_b')).map((t) => t.requestId)).toEqual(['r3']);
  });
});

describe('an event the database refuses', () => {
  async function poisoned(): Promise<TestServer> {
    const db = await freshDb('poisoned');
    const server = await startOtlpServer({ db });
    // Another program's trigger: a real failure of the database for one event alone.
    await refuseTurns(db, 'poison%', 'refused by a trigger');
    return server;
  }

  const NOT_STORED = 'could not be stored (refused by a trigger); the rest of the request was';

  it('HTTP /v1/events: is rejected by index, every other event is stored, and a retry stores nothing twice', async () => {
    const server = await poisoned();
    const batch = [turn('g1', 's_one'), turn('poison1', 's_one', { ts: T0 + 1 }), turn('g2', 's_two'), turn('g3', 's_two', { ts: T0 + 2 }), turn('poison2', 's_three')];
    const expected = (accepted: number, duplicates: number) => ({
      status: 200,
      body: {
        accepted,
        duplicates,
        rejected: [
          { index: 1, field: 'event', error: `events[1]: ${NOT_STORED}` },
          { index: 4, field: 'event', error: `events[4]: ${NOT_STORED}` },
        ],
      },
    });
    expect(await send(server, '/v1/events', batch)).toEqual(expected(3, 0));
    expect(await send(server, '/v1/events', batch)).toEqual(expected(0, 3));
    expect((await turnsOf(server, 's_one')).map((t) => t.requestId)).toEqual(['g1']);
    expect((await turnsOf(server, 's_two')).map((t) => t.requestId)).toEqual(['g2', 'g3']);
    expect(server.stderr.filter((line) => line.includes('event=event_not_stored'))).toHaveLength(1);
    expect(server.stderr.join('\n')).not.toContain('event=unhandled_error');
  });

  it('OTLP/HTTP logs: is rejected in the partial success, every other record is stored', async () => {
    const server = await poisoned();
    const reply = await send(server, '/v1/logs', otlpLogs([turn('g1', 's_one'), turn('poison1', 's_one', { ts: T0 + 1 }), turn('g2', 's_one', { ts: T0 + 2 })]));
    expect(reply).toEqual({
      status: 200,
      body: { partialSuccess: { rejectedLogRecords: '1', errorMessage: `1 record(s) rejected: logs[1] (native): event: ${NOT_STORED}` } },
    });
    expect((await turnsOf(server, 's_one')).map((t) => t.requestId)).toEqual(['g1', 'g2']);
  });
});
