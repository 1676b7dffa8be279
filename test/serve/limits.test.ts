// Every limit on what one request may carry has a default, an option, and an
// error that names the option; a request over one loses nothing else.
import { describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS } from '../../src/ingest/limits.js';
import { SEED_TOOLS, toWire, tools, turn } from '../core/scenario.js';
import { testApp } from './harness.js';

const limits = { ...DEFAULT_LIMITS, maxEvents: 3, maxString: 32, maxTools: 4, maxAttributes: 5 };

describe('request limits', () => {
  it('refuses more events than --max-events with 413, and stores nothing of that request', async () => {
    const { post, get } = testApp({ limits });
    const response = await post({ events: [1, 2, 3, 4].map((i) => toWire(turn(`r${i}`))) });
    expect(response.status).toBe(413);
    expect(((await response.json()) as any).error.message).toBe('the request holds 4 events; the limit is 3 (--max-events)');
    expect((await get('/v1/sessions')).body.sessions).toEqual([]);
    expect((await post({ events: [toWire(turn('r1'))] })).status).toBe(200);
  });

  it('rejects an event with a string over --max-string or more tools than --max-tools, and keeps the others', async () => {
    const { post } = testApp({ limits });
    const response = await post({
      events: [
        toWire(turn('ok')),
        toWire(turn('long', { sessionId: 'a-session-id-longer-than-thirty-two' })),
        toWire(turn('many', { tools: tools([...SEED_TOOLS, 'one_more']) })),
      ],
    });
    expect(await response.json()).toEqual({
      accepted: 1,
      duplicates: 0,
      rejected: [
        { index: 1, field: 'sessionId', error: 'events[1].sessionId: Too big: expected string to have <=32 characters (--max-string)' },
        { index: 2, field: 'tools', error: 'events[2].tools: Too big: expected array to have <=4 items (--max-tools)' },
      ],
    });
  });

  it('rejects an OTLP record with more attributes than --max-attributes, and too many records with 413', async () => {
    const { app } = testApp({ limits });
    const record = (attributes: number) => ({
      timeUnixNano: '1796032800000000000',
      attributes: Array.from({ length: attributes }, (_, i) => ({ key: `k${i}`, value: { stringValue: 'v' } })),
    });
    const send = (records: object[]) =>
      app.request('/v1/logs', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ resourceLogs: [{ scopeLogs: [{ logRecords: records }] }] }),
      });
    const partial = await send([record(2), record(6)]);
    expect(partial.status).toBe(200);
    expect(await partial.json()).toEqual({
      partialSuccess: { rejectedLogRecords: '1', errorMessage: '1 record(s) rejected: logs[1]: has 6 attributes; the limit is 5 (--max-attributes)' },
    });
    const many = await send([record(1), record(1), record(1), record(1)]);
    expect(many.status).toBe(413);
    expect(JSON.stringify(await many.json())).toContain('the request holds 4 events; the limit is 3 (--max-events)');
  });
});
