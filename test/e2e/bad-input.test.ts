// Bad input against a real server, one row per case: the exact status, error
// code and message, or the exact partial-success answer; afterwards the
// server still answers and what was stored before is intact, record for
// record. The rows share one seeded server, so that one process takes all of
// them (and the suite stays fast); each row compares what is stored with its
// own starting point.
import { Agent } from 'node:http';
import { gzipSync } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import { breaksOf, sessionsOf, turnsOf, type WireBreak, type WireTurn } from './api.js';
import { openaiBreak, realisticBatch, REALISTIC_TURNS, seedBreak, splitTurn } from './events.js';
import { postEvents, startServer, type Reply, type ServerProcess } from './server.js';
import { rawRequest } from './process.js';

const LIMIT = 64 * 1024;
const BODY_LIMIT = ['--body-limit', '64KiB'];
const JSON_TYPE = { 'content-type': 'application/json' };
const NDJSON_TYPE = { 'content-type': 'application/x-ndjson' };
/** Turns stored by realisticBatch(). */
const SEEDED_TURNS = 7;
const SESSIONS = Object.keys(REALISTIC_TURNS);

/** Every request on a connection of its own, so one case cannot spoil the next through keep-alive. */
const post = (url: string, body: Buffer | readonly Buffer[] | string, headers: Record<string, string> = JSON_TYPE) =>
  rawRequest(url, '/v1/events', { method: 'POST', headers, body: typeof body === 'string' ? Buffer.from(body) : body });
const get = (url: string, path: string) => rawRequest(url, path);
const grafanaQuery = (url: string, body: unknown) => rawRequest(url, '/grafana/json/query', { method: 'POST', headers: JSON_TYPE, body: Buffer.from(JSON.stringify(body)) });

/** A valid JSON body larger than the limit. */
const oversized = () => Buffer.from(JSON.stringify({ events: realisticBatch(), padding: 'x'.repeat(LIMIT) }));
const gzipped = gzipSync(Buffer.from(JSON.stringify(realisticBatch())));

/** A new turn for sess_A, so that a stored good event shows in the turn count. */
const good = (requestId: string, at: number) => splitTurn('sess_A', { requestId, at, read: 0, write: 49_000 });

interface ErrorCase {
  name: string;
  send: (url: string) => Promise<Reply>;
  status: number;
  code: string;
  message: string;
  /** A page of the web UI: the error comes as an HTML page, not the API's JSON. */
  page?: true;
}

const unescapeHtml = (text: string) => text.replace(/&#(\d+);/g, (_, code: string) => String.fromCharCode(Number(code))).replace(/&quot;/g, '"').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');

const ERROR_CASES: ErrorCase[] = [
  // Bodies that are not events at all: nothing is stored.
  { name: 'not JSON', send: (u) => post(u, '{"events": [{"type": "snapshot",'), status: 400, code: 'invalid_body', message: 'body is not JSON: ' },
  { name: 'NDJSON with no valid line', send: (u) => post(u, 'hello\nworld\n', NDJSON_TYPE), status: 400, code: 'invalid_body', message: 'no line of the NDJSON body is valid JSON' },
  { name: 'JSON object without events', send: (u) => post(u, '{"event": []}'), status: 400, code: 'invalid_body', message: 'expected {"events": [...]} or an array of events' },
  { name: 'events not an array', send: (u) => post(u, '{"events": {"type": "snapshot"}}'), status: 400, code: 'invalid_body', message: 'expected {"events": [...]} or an array of events' },
  { name: 'a JSON string', send: (u) => post(u, '"events"'), status: 400, code: 'invalid_body', message: 'expected {"events": [...]} or an array of events' },
  // Size: declared, streamed without a length, and after decompression.
  { name: 'body over --body-limit with Content-Length', send: (u) => post(u, oversized()), status: 413, code: 'payload_too_large', message: `request body exceeds the limit of ${LIMIT} bytes` },
  {
    name: 'body over --body-limit, chunked without Content-Length',
    send: (u) => {
      const body = oversized();
      return post(u, Array.from({ length: Math.ceil(body.length / 8192) }, (_, i) => body.subarray(i * 8192, (i + 1) * 8192)));
    },
    status: 413,
    code: 'payload_too_large',
    message: `request body exceeds the limit of ${LIMIT} bytes`,
  },
  {
    name: 'gzip bomb: 10 KiB that inflate to 16 MiB',
    send: (u) => post(u, gzipSync(Buffer.alloc(16 * 1024 * 1024, ' ')), { ...JSON_TYPE, 'content-encoding': 'gzip' }),
    status: 413,
    code: 'payload_too_large',
    message: `decompressed body exceeds the limit of ${LIMIT} bytes`,
  },
  { name: 'truncated gzip', send: (u) => post(u, gzipped.subarray(0, gzipped.length - 20), { ...JSON_TYPE, 'content-encoding': 'gzip' }), status: 400, code: 'invalid_body', message: 'body is not valid gzip: unexpected end of file' },
  { name: 'Content-Encoding gzip on a plain body', send: (u) => post(u, JSON.stringify(realisticBatch()), { ...JSON_TYPE, 'content-encoding': 'gzip' }), status: 400, code: 'invalid_body', message: 'body is not valid gzip' },
  // Media types.
  { name: 'Content-Type text/plain', send: (u) => post(u, JSON.stringify(realisticBatch()), { 'content-type': 'text/plain' }), status: 415, code: 'unsupported_media_type', message: 'Content-Type "text/plain" is not accepted' },
  { name: 'no Content-Type', send: (u) => post(u, JSON.stringify(realisticBatch()), {}), status: 415, code: 'unsupported_media_type', message: 'Content-Type "(none)" is not accepted' },
  { name: 'Content-Encoding br', send: (u) => post(u, JSON.stringify(realisticBatch()), { ...JSON_TYPE, 'content-encoding': 'br' }), status: 415, code: 'unsupported_media_type', message: 'Content-Encoding br is not supported' },
  // Query parameters of the read routes: a 400 that names the parameter.
  { name: 'GET /v1/breaks?limit=0', send: (u) => get(u, '/v1/breaks?limit=0'), status: 400, code: 'bad_request', message: 'limit: expected a whole number from 1 to 1000, got "0"' },
  { name: 'GET /v1/sessions?limit=many', send: (u) => get(u, '/v1/sessions?limit=many'), status: 400, code: 'bad_request', message: 'limit: expected a whole number from 1 to 1000, got "many"' },
  { name: 'GET /v1/breaks?from=yesterday', send: (u) => get(u, '/v1/breaks?from=yesterday'), status: 400, code: 'bad_request', message: 'from: expected RFC 3339 or epoch milliseconds, got "yesterday"' },
  { name: 'GET /v1/sessions with from after to', send: (u) => get(u, '/v1/sessions?from=2026-12-01T00:00:00Z&to=2026-11-30T00:00:00Z'), status: 400, code: 'bad_request', message: 'from: must be earlier than to' },
  { name: 'GET /v1/breaks?cursor=garbage', send: (u) => get(u, '/v1/breaks?cursor=garbage'), status: 400, code: 'bad_request', message: 'cursor: ' },
  { name: 'GET /v1/stats?interval=30s', send: (u) => get(u, '/v1/stats?interval=30s'), status: 400, code: 'bad_request', message: 'interval: expected a whole number of minutes such as 1m, 15m, 1h or 1d, got "30s"' },
  { name: 'GET /v1/stats?groupBy=sessionId', send: (u) => get(u, '/v1/stats?groupBy=sessionId'), status: 400, code: 'bad_request', message: 'groupBy: expected one of model, provider, agentId, reason, state, got "sessionId"' },
  // The store refuses a session filter on stats (kept per minute, not per
  // session); the route must not silently answer unfiltered totals instead.
  { name: 'GET /v1/stats?sessionId=sess_A', send: (u) => get(u, '/v1/stats?sessionId=sess_A'), status: 400, code: 'bad_request', message: 'sessionId: ' },
  // Names of Object.prototype's members are no parameter value, asset or ad hoc filter key.
  ...['__proto__', 'constructor', 'toString', 'hasOwnProperty'].flatMap((name): ErrorCase[] => [
    { name: `UI /sessions?order=${name}`, send: (u) => get(u, `/sessions?order=${name}`), status: 400, code: 'bad_request', message: `order: expected one of recent, worst_cache_rate, extra_cost, got "${name}"`, page: true },
    { name: `UI /?range=${name}`, send: (u) => get(u, `/?range=${name}`), status: 400, code: 'bad_request', message: `range: expected one of 1h, 24h, 7d, 30d, all, got "${name}"`, page: true },
    { name: `UI /breaks?order=${name}`, send: (u) => get(u, `/breaks?order=${name}`), status: 400, code: 'bad_request', message: `order: expected one of`, page: true },
    { name: `UI asset /ui/${name}`, send: (u) => get(u, `/ui/${name}`), status: 404, code: 'not_found', message: `no route GET /ui/${name}` },
    {
      name: `Grafana ad hoc filter key ${name}`,
      send: (u) => grafanaQuery(u, { targets: [{ target: 'summary', refId: 'A' }], filters: [{ key: name, operator: '=', value: 'x' }] }),
      status: 400,
      code: 'bad_request',
      message: `filters: no ad hoc filter key "${name}"`,
    },
  ]),
  // A NUL byte is in no stored value (PostgreSQL's text cannot hold one): refused on both stores alike, naming the field.
  ...(
    [
      ['GET /v1/breaks?model=', (u) => get(u, '/v1/breaks?model=claude%00'), 'model'],
      ['GET /v1/breaks?sessionId=', (u) => get(u, '/v1/breaks?sessionId=sess_A%00'), 'sessionId'],
      ['GET /v1/breaks?reason=', (u) => get(u, '/v1/breaks?reason=%00'), 'reason'],
      ['GET /v1/breaks/:requestId', (u) => get(u, '/v1/breaks/req_01%00'), 'path'],
      ['GET /v1/breaks/agreement?agentId=', (u) => get(u, '/v1/breaks/agreement?agentId=a%00b'), 'agentId'],
      ['GET /v1/breaks/fingerprints?provider=', (u) => get(u, '/v1/breaks/fingerprints?provider=a%00'), 'provider'],
      ['GET /v1/sessions?agentId=', (u) => get(u, '/v1/sessions?agentId=a%00b'), 'agentId'],
      ['GET /v1/sessions?provider=', (u) => get(u, '/v1/sessions?provider=openai,%00'), 'provider'],
      ['GET /v1/sessions/:sessionId/turns', (u) => get(u, '/v1/sessions/sess_A%00/turns'), 'path'],
      ['GET /v1/stats?model=', (u) => get(u, '/v1/stats?model=%00'), 'model'],
      ['Grafana (Infinity) /grafana/breaks?sessionId=', (u) => get(u, '/grafana/breaks?sessionId=sess_A%00'), 'sessionId'],
      ['Grafana (Infinity) /grafana/sessions?model=', (u) => get(u, '/grafana/sessions?model=%00'), 'model'],
      ['UI /sessions?q=', (u) => get(u, '/sessions?q=sess%00'), 'q'],
      ['Grafana ad hoc filter value', (u) => grafanaQuery(u, { targets: [{ target: 'summary', refId: 'A' }], filters: [{ key: 'model', operator: '=', value: 'claude\0' }] }), 'filters[0].value'],
      ['Grafana payload', (u) => grafanaQuery(u, { targets: [{ target: 'breaks', refId: 'A', payload: { sessionId: ['sess_A', 'sess_B\0'] } }] }), 'targets[0].payload.sessionId[1]'],
      ['Grafana code-mode payload', (u) => grafanaQuery(u, { targets: [{ target: 'breaks', refId: 'A', payload: JSON.stringify({ agentId: 'a\0' }) }] }), 'payload.agentId'],
      ['Grafana tag values', (u) => rawRequest(u, '/grafana/json/tag-values', { method: 'POST', headers: JSON_TYPE, body: Buffer.from(JSON.stringify({ key: 'model\0' })) }), 'key'],
    ] as [string, ErrorCase['send'], string][]
  ).map(([name, send, field]): ErrorCase => ({
    name: `NUL byte in ${name}`,
    send,
    status: 400,
    code: 'bad_request',
    message: `${field}: contains a NUL byte (%00, \\u0000), which no stored value holds`,
    ...(name.startsWith('UI ') ? { page: true as const } : {}),
  })),
  // A cursor of the explorer's cost order that no server issued: a negative or fractional offset.
  ...[[-1], [1.5]].map(
    (offset): ErrorCase => ({
      name: `UI /breaks?order=extra_cost with a crafted cursor ${JSON.stringify(offset)}`,
      send: (u) => get(u, `/breaks?order=extra_cost&cursor=${Buffer.from(JSON.stringify(offset)).toString('base64url')}`),
      status: 400,
      code: 'bad_request',
      message: 'cursor: not a cursor this server issued',
      page: true,
    }),
  ),
  // Not found.
  { name: 'unknown route', send: (u) => get(u, '/v1/sessionz'), status: 404, code: 'not_found', message: 'no route GET /v1/sessionz' },
  { name: 'unknown method on a route', send: (u) => rawRequest(u, '/v1/breaks', { method: 'DELETE' }), status: 404, code: 'not_found', message: 'no route DELETE /v1/breaks' },
  { name: 'unknown session', send: (u) => get(u, '/v1/sessions/sess_nope/turns'), status: 404, code: 'not_found', message: 'no session "sess_nope"' },
];

interface PartialCase {
  name: string;
  send: (url: string) => Promise<Reply>;
  /** The exact answer; `error` may be an asymmetric matcher. */
  answer: { accepted: number; duplicates: number; rejected: { index: number; field: string; error: unknown }[] };
  /** Turns added by the good events of the batch. */
  newTurns: number;
}

const snapshot = { type: 'snapshot', requestId: 'req_x', sessionId: 'sess_A', ts: '2026-11-30T10:05:00Z', model: 'claude-sonnet-4-5' };
const usage = { type: 'usage', requestId: 'req_x', provider: 'anthropic', cacheReadInputTokens: 100 };

const PARTIAL_CASES: PartialCase[] = [
  {
    name: 'wrong field types',
    send: (u) =>
      postEvents(u, [
        { ...snapshot, ts: 'yesterday' },
        { ...snapshot, tools: 'read_file,shell' },
        { ...snapshot, model: 42 },
        { ...usage, cacheReadInputTokens: -5 },
        { ...usage, usage: { input_tokens: 'many' }, cacheReadInputTokens: undefined },
        { ...snapshot, cacheControl: { ttl: 300 } },
      ]),
    answer: {
      accepted: 0,
      duplicates: 0,
      rejected: [
        { index: 0, field: 'ts', error: 'events[0].ts: expected RFC 3339 (e.g. 2026-11-30T10:00:00Z) or epoch milliseconds' },
        { index: 1, field: 'tools', error: 'events[1].tools: expected array, received string' },
        { index: 2, field: 'model', error: 'events[2].model: expected string, received number' },
        { index: 3, field: 'cacheReadInputTokens', error: 'events[3].cacheReadInputTokens: Too small: expected number to be >=0' },
        { index: 4, field: 'usage.input_tokens', error: 'events[4].usage.input_tokens: expected a non-negative integer, got a non-numeric string' },
        { index: 5, field: 'cacheControl.ttl', error: 'events[5].cacheControl.ttl: expected string, received number' },
      ],
    },
    newTurns: 0,
  },
  {
    name: 'missing required fields',
    send: (u) =>
      postEvents(u, [
        { ...snapshot, model: undefined },
        { ...snapshot, requestId: undefined },
        { ...snapshot, sessionId: undefined },
        // Normalised counts need no provider (SPEC §2); a raw usage object does, to be read by.
        { type: 'usage', requestId: 'req_x', usage: { input_tokens: 10, cache_read_input_tokens: 0 } },
        { type: 'usage', requestId: 'req_x', provider: 'anthropic' },
      ]),
    answer: {
      accepted: 0,
      duplicates: 0,
      rejected: [
        { index: 0, field: 'model', error: 'events[0].model: required' },
        { index: 1, field: 'requestId', error: 'events[1].requestId: required' },
        { index: 2, field: 'sessionId', error: 'events[2].sessionId: required' },
        {
          index: 3,
          field: 'provider',
          error: 'events[3].provider: required with a raw usage object (e.g. "anthropic", "openai"); with normalised token fields it may be left out',
        },
        {
          index: 4,
          field: 'usage',
          error: 'events[4].usage: required: the provider usage object, or uncachedInputTokens/cacheReadInputTokens/cacheWriteInputTokens',
        },
      ],
    },
    newTurns: 0,
  },
  {
    name: 'unknown event type, no type, not an object',
    send: (u) => postEvents(u, [{ ...snapshot, type: 'completion' }, { ...snapshot, type: undefined }, 42, null, ['snapshot']]),
    answer: {
      accepted: 0,
      duplicates: 0,
      rejected: [
        { index: 0, field: 'type', error: 'events[0].type: expected one of snapshot, usage, turn, got "completion"' },
        { index: 1, field: 'type', error: 'events[1].type: required: one of snapshot, usage, turn' },
        { index: 2, field: 'event', error: 'events[2].event: expected a JSON object' },
        { index: 3, field: 'event', error: 'events[3].event: expected a JSON object' },
        { index: 4, field: 'event', error: 'events[4].event: expected a JSON object' },
      ],
    },
    newTurns: 0,
  },
  {
    name: 'mixed good and bad events: the good ones are stored',
    send: (u) => {
      const a = good('req_06', 60);
      const b = good('req_07', 70);
      return postEvents(u, { events: [a.snapshot, { ...a.usage, provider: '' }, a.usage, b.snapshot, { type: 'turn' }, b.usage] });
    },
    answer: {
      accepted: 4,
      duplicates: 0,
      rejected: [
        { index: 1, field: 'provider', error: 'events[1].provider: Too small: expected string to have >=1 characters' },
        { index: 4, field: 'requestId', error: 'events[4].requestId: required; events[4].sessionId: required; events[4].ts: required; events[4].model: required' },
      ],
    },
    newTurns: 2,
  },
  {
    name: 'NDJSON with one unreadable line among good ones',
    send: (u) => {
      const a = good('req_08', 80);
      return post(u, [JSON.stringify(a.snapshot), '{"type": "usage", "requestId": ', JSON.stringify(a.usage)].join('\n'), NDJSON_TYPE);
    },
    answer: {
      accepted: 2,
      duplicates: 0,
      rejected: [{ index: 1, field: 'event', error: expect.stringMatching(/^events\[1\]: line 2: not valid JSON \(/) }],
    },
    newTurns: 1,
  },
];

async function seededServer(lifetime: 'test' | 'file' = 'test') {
  const server = await startServer({ args: BODY_LIMIT, lifetime });
  const seeded = await postEvents(server.url, realisticBatch());
  expect(seeded.body).toMatchObject({ accepted: realisticBatch().length, rejected: [] });
  expect(await breaksOf(server.url)).toEqual([openaiBreak(), seedBreak()]);
  return server;
}

async function storedTurns(url: string): Promise<number> {
  return (await sessionsOf(url)).reduce((sum, s) => sum + s.turns, 0);
}

interface Stored {
  /** Over every session, seeded or not. */
  turnCount: number;
  turns: Record<string, WireTurn[]>;
  breaks: WireBreak[];
}

/** Every turn of the seeded sessions and every break record, as the API serves them. */
async function stored(url: string): Promise<Stored> {
  const turns: Record<string, WireTurn[]> = {};
  for (const id of SESSIONS) turns[id] = await turnsOf(url, id);
  return { turnCount: await storedTurns(url), turns, breaks: await breaksOf(url) };
}

/**
 * The server answers, and what was stored before is still stored, field for
 * field: no turn changed, none went missing, no break record was rewritten.
 * Good events of the batch may only add `newTurns` turns after the last ones
 * (they are later than everything seeded) and their breaks.
 */
async function stillServing(url: string, before: Stored, newTurns = 0) {
  const health = await get(url, '/healthz');
  expect(health.status).toBe(200);
  expect(health.body).toEqual({ status: 'ok' });
  const after = await stored(url);
  expect(after.turnCount).toBe(before.turnCount + newTurns);
  for (const id of SESSIONS) expect(after.turns[id]!.slice(0, before.turns[id]!.length), id).toEqual(before.turns[id]);
  const ids = (s: Stored) => Object.values(s.turns).flat().map((t) => t.requestId);
  const old = new Set(ids(before));
  const added = new Set(ids(after).filter((id) => !old.has(id)));
  expect(added.size).toBe(newTurns);
  // Every break but those of the added turns is one of before's, unchanged.
  expect(after.breaks.filter((b) => !added.has(b.requestId))).toEqual(before.breaks);
}

describe('bad input against a real server', () => {
  let shared: ServerProcess;
  beforeAll(async () => {
    shared = await seededServer('file');
  });

  it.each(ERROR_CASES)('$name → $status $code', async ({ send, status, code, message, page }) => {
    const before = await stored(shared.url);
    const reply = await send(shared.url);
    expect(reply.status).toBe(status);
    if (page) {
      // A browser's page: the problem and what to do, in the UI's style.
      expect(reply.headers.get('content-type')).toMatch(/^text\/html/);
      const shown = (id: string) => unescapeHtml(new RegExp(`id="${id}"[^>]*>([^<]*)<`).exec(reply.text)?.[1] ?? '');
      expect(shown('error-message')).toContain(message);
      expect(shown('error-hint')).not.toBe('');
    } else {
      expect(reply.headers.get('content-type')).toBe('application/json');
      expect(reply.body).toEqual({
        error: { code, message: expect.stringContaining(message), hint: expect.any(String), requestId: expect.any(String) },
      });
      expect((reply.body as { error: { hint: string } }).error.hint).not.toBe('');
    }
    await stillServing(shared.url, before);
  });

  it.each(PARTIAL_CASES)('$name → 200 with rejected[]', async ({ send, answer, newTurns }) => {
    const before = await stored(shared.url);
    const reply = await send(shared.url);
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual(answer);
    await stillServing(shared.url, before, newTurns);
  });

  it('the seeded data outlives every row', async () => {
    expect(await storedTurns(shared.url)).toBeGreaterThanOrEqual(SEEDED_TURNS);
    // The seeded break records, exactly as first stored, among the later ones.
    expect(await breaksOf(shared.url)).toEqual(expect.arrayContaining([openaiBreak(), seedBreak()]));
    expect((await get(shared.url, '/readyz')).status).toBe(200);
  });

  it('the error names the request id the client sent', async () => {
    const reply = await rawRequest(shared.url, '/v1/nope', { headers: { 'x-request-id': 'trace-4bf92f3577b34da6' } });
    expect(reply.body).toMatchObject({ error: { code: 'not_found', requestId: 'trace-4bf92f3577b34da6' } });
  });

  // Clients keep connections alive (undici, OTel exporters). After a 413 the
  // server stopped reading mid-body: it must either drain the body or answer
  // with Connection: close, never advertise keep-alive and then drop the
  // connection under the client's next request.
  it('after a 413 on a chunked body, the same keep-alive connection still works', async () => {
    const server = await startServer({ args: BODY_LIMIT });
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      // Four times the limit: most of the body is still unread when the 413 goes out.
      const body = Buffer.concat([oversized(), Buffer.alloc(3 * LIMIT, ' ')]);
      const chunks = Array.from({ length: Math.ceil(body.length / 8192) }, (_, i) => body.subarray(i * 8192, (i + 1) * 8192));
      const tooLarge = await rawRequest(server.url, '/v1/events', { method: 'POST', headers: JSON_TYPE, body: chunks, agent });
      expect(tooLarge.status).toBe(413);
      if (tooLarge.headers.get('connection') === 'close') return;
      const next = await rawRequest(server.url, '/healthz', { agent }).catch((error: Error) => error);
      expect(next instanceof Error ? `${next.message} (413 said connection: ${tooLarge.headers.get('connection')})` : next.status).toBe(200);
    } finally {
      agent.destroy();
    }
  });
});
