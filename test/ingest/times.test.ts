// Times outside what an event can have (past JS Date's range, epoch seconds
// or microseconds mistaken for milliseconds) are that event's rejection on
// every way in; a query that names one is a 400; and a stored row whose
// values are no time or no JSON (written by something else) never fails a
// read: every read still answers 200.
import { describe, expect, it } from 'vitest';
import { toCacheEvent } from '../../src/ingest/http/events.js';
import { claudeDebugDecoder } from '../../src/ingest/tail/formats/claude-debug.js';
import { emptyDecoded } from '../../src/ingest/tail/formats/decoder.js';
import { ndjsonDecoder } from '../../src/ingest/tail/formats/ndjson.js';
import { seedSession, T0 } from '../e2e/events.js';
import { freshDb, runOn } from '../store-under-test.js';
import { startOtlpServer, type TestServer } from '../otlp/harness.js';
import { send, turn } from './requests.js';

/** Valid epoch ms by type, one past what a JS Date holds. */
const POISON = 8_640_000_000_000_001;
const RANGE = 'expected a time from 2000-01-01T00:00:00Z to 2100-01-01T00:00:00Z';

async function get(server: TestServer, path: string) {
  const response = await fetch(`${server.url}${path}`);
  return { status: response.status, text: await response.text() };
}

/** Every read route a dashboard or client uses, over all time. */
const READS = ['/v1/sessions', '/v1/sessions/s_good/turns', '/v1/breaks', '/v1/stats?from=0', '/v1/breaks/external', '/'];

describe('times out of range', () => {
  it('HTTP /v1/events: each bad time is its event\'s rejection, named with the range; the rest is stored and reads answer', async () => {
    const server = await startOtlpServer();
    const reply = await send(server, '/v1/events', [
      turn('poison', 's_bad', { ts: POISON }),
      turn('seconds', 's_bad', { ts: Math.floor(T0 / 1000) }),
      turn('micros', 's_bad', { ts: T0 * 1000 }),
      turn('end', 's_bad', { endTs: POISON }),
      turn('year9999', 's_bad', { ts: '9999-12-31T23:59:59Z' }),
      { type: 'usage', requestId: 'usage', sessionId: 's_bad', ts: POISON, uncachedInputTokens: 1 },
      turn('good', 's_good'),
    ]);
    expect(reply).toEqual({
      status: 200,
      body: {
        accepted: 1,
        duplicates: 0,
        rejected: [
          { index: 0, field: 'ts', error: `events[0].ts: ${RANGE}, got ${POISON}` },
          { index: 1, field: 'ts', error: `events[1].ts: ${RANGE} (it reads as epoch seconds: send milliseconds), got ${Math.floor(T0 / 1000)}` },
          { index: 2, field: 'ts', error: `events[2].ts: ${RANGE} (it reads as epoch microseconds: send milliseconds), got ${T0 * 1000}` },
          { index: 3, field: 'endTs', error: `events[3].endTs: ${RANGE}, got ${POISON}` },
          { index: 4, field: 'ts', error: `events[4].ts: ${RANGE}, got "9999-12-31T23:59:59Z"` },
          { index: 5, field: 'ts', error: `events[5].ts: ${RANGE}, got ${POISON}` },
        ],
      },
    });
    for (const path of READS) expect((await get(server, path)).status, path).toBe(200);
    expect(JSON.parse((await get(server, '/v1/sessions')).text).sessions.map((s: { sessionId: string }) => s.sessionId)).toEqual(['s_good']);
  });

  it('query parameters out of range are a 400 that names the parameter and the range', async () => {
    const server = await startOtlpServer();
    const cases = [
      ['/v1/stats?to=9007199254740991', 'to'],
      ['/v1/sessions?from=8640000000000001', 'from'],
      ['/v1/breaks?to=9999-01-01T00:00:00Z', 'to'],
    ] as const;
    for (const [path, name] of cases) {
      const reply = await get(server, path);
      expect(reply.status, path).toBe(400);
      expect(JSON.parse(reply.text).error.message, path).toBe(
        `${name}: expected a time from 1970-01-01T00:00:00Z to 2100-01-01T00:00:00Z, got "${new URL(path, 'http://x').searchParams.get(name)}"`,
      );
    }
  });

  it('OTLP/HTTP logs: a record whose time is out of range is rejected in the partial success, the other stored', async () => {
    const server = await startOtlpServer();
    const record = (requestId: string, nanos: string) => ({
      timeUnixNano: nanos,
      eventName: 'prompt_cache.turn',
      attributes: Object.entries({ requestId, sessionId: 's_otlp', model: 'claude-sonnet-4-5', provider: 'anthropic', uncachedInputTokens: 5_000, cacheReadInputTokens: 0 }).map(
        ([key, value]) => ({ key, value: typeof value === 'number' ? { intValue: String(value) } : { stringValue: value } }),
      ),
    });
    const reply = await send(server, '/v1/logs', {
      resourceLogs: [{ resource: {}, scopeLogs: [{ scope: {}, logRecords: [record('o_bad', `${POISON}000000`), record('o_good', `${T0}000000`)] }] }],
    });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({
      partialSuccess: { rejectedLogRecords: '1', errorMessage: `1 record(s) rejected: logs[0] (native): ts: ${RANGE}, got ${POISON}` },
    });
    const turns = JSON.parse((await get(server, '/v1/sessions/s_otlp/turns')).text).turns;
    expect(turns.map((t: { requestId: string }) => t.requestId)).toEqual(['o_good']);
  });

  it('tail inputs: an NDJSON event and a Claude Code debug line out of range are rejected by line', () => {
    const out = emptyDecoded();
    const ndjson = Buffer.from(JSON.stringify(turn('t', 's', { ts: POISON })));
    ndjsonDecoder().decode(ndjson, 0, ndjson.length, 1, out);
    const debug = Buffer.from('9999-01-01T00:00:00.000Z [DEBUG] [PROMPT CACHE BREAK] tools changed [source=repl_main_thread, call #3, cache read: 100 → 0, creation: 90]');
    claudeDebugDecoder({ path: '/logs/session.txt' }).decode(debug, 0, debug.length, 2, out);
    expect(out.events).toEqual([]);
    expect(out.externalBreaks).toEqual([]);
    expect(out.rejected).toEqual([
      { line: 1, error: `ts: ${RANGE}, got ${POISON}` },
      { line: 2, error: `the line's time: ${RANGE}` },
    ]);
  });

  it('times more than a day ahead are stored, and said once in the log', async () => {
    const server = await startOtlpServer();
    const ahead = Date.now() + 3 * 86_400_000;
    const reply = await send(server, '/v1/events', [turn('a1', 's_ahead', { ts: ahead }), turn('a2', 's_ahead', { ts: ahead + 1 })]);
    expect(reply.body).toMatchObject({ accepted: 2, rejected: [] });
    const lines = server.stderr.filter((line) => line.includes('event=event_time_ahead'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('events=2 requestId=a1');
  });

  it('a stored row that is no time or no JSON never fails a read, nor a later write to its session', async () => {
    const db = await freshDb('poisoned');
    const server = await startOtlpServer({ db });
    const seeded = await send(server, '/v1/events', [...seedSession('s_good'), ...seedSession('s_hurt').map((e) => ({ ...e, requestId: `hurt_${String(e.requestId)}` }))]);
    expect(seeded.body).toMatchObject({ rejected: [] });
    // Another program writes values no ingest would take.
    await runOn(db, {
      sqlite: [
        ['UPDATE turns SET ts = ?, end_ts = ?, diagnostics = ?, message_markers = ?', [POISON, POISON, '{not json', '[not json']],
        ['UPDATE streams SET first_ts = ?, last_ts = ?', [POISON, -POISON]],
        ["UPDATE breaks SET ts = ?, record = json_set(record, '$.ts', ?)", [POISON, POISON]],
      ],
      postgres: [
        ['UPDATE turns SET ts = $1, end_ts = $1, diagnostics = $2, message_markers = $3', [POISON, '{not json', '[not json']],
        ['UPDATE streams SET first_ts = $1, last_ts = $2', [POISON, -POISON]],
        ["UPDATE breaks SET ts = $1, record = jsonb_set(record::jsonb, '{ts}', to_jsonb($1::bigint))::text", [POISON]],
      ],
    });
    for (const path of [...READS, '/v1/sessions/s_hurt/turns']) {
      const reply = await get(server, path);
      expect(reply.status, `${path}: ${reply.text.slice(0, 200)}`).toBe(200);
    }
    const sessions = JSON.parse((await get(server, '/v1/sessions')).text).sessions;
    expect(sessions.map((s: { firstSeen: unknown; lastSeen: unknown }) => [s.firstSeen, s.lastSeen])).toEqual([[null, null], [null, null]]);
    const turns = JSON.parse((await get(server, '/v1/sessions/s_hurt/turns')).text).turns;
    expect(turns.every((t: { ts: unknown; endTs: unknown }) => t.ts === null && t.endTs === null)).toBe(true);
    const later = await send(server, '/v1/events', [turn('late', 's_hurt', { ts: T0 + 60_000 })]);
    expect(later).toEqual({ status: 200, body: { accepted: 1, duplicates: 0, rejected: [] } });
  });

  it('toCacheEvent names the range for every time field', () => {
    expect(toCacheEvent(turn('r', 's', { endTs: -1 }))).toMatchObject({ ok: false, field: 'endTs' });
    expect(toCacheEvent(turn('r', 's', { ts: 0 }))).toMatchObject({ ok: false, field: 'ts', error: `ts: ${RANGE}, got 0` });
    expect(toCacheEvent(turn('r', 's', { ts: Date.UTC(2099, 11, 31) }))).toMatchObject({ ok: true });
  });
});
