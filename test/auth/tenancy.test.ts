// Every route, every transport: a key of project A can neither read nor write
// project B, and a read key cannot ingest. The walk covers each documented
// route; a route added without a case here fails the test.
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { ROUTE_DOCS } from '../../src/serve/rest/docs.js';
import { toWire, turn, usage, SEED_TOOLS, tools } from '../core/scenario.js';
import { freshDb } from '../store-under-test.js';
import { emitLogs, logExporter, nativeRecord, startOtlpServer, type TestServer } from '../otlp/harness.js';

async function createKey(db: string, project: string, scope: string): Promise<string> {
  let key = '';
  const code = await main(['keys', 'create', '--db', db, '--project', project, '--scope', scope], {
    stdout: (t) => (key += t),
    stderr: () => {},
    env: {},
    interactive: false,
  });
  expect(code).toBe(0);
  return key.trim();
}

/** Two turns of a session with a tool re-order, as wire events; every id carries `tag`. */
function session(tag: string) {
  return [
    turn(`${tag}-r1`, { sessionId: `${tag}-session`, model: `model-${tag}`, usage: usage(40_000, 500) }),
    turn(`${tag}-r2`, { sessionId: `${tag}-session`, model: `model-${tag}`, at: 20_000, tools: tools([...SEED_TOOLS].reverse()), usage: usage(0, 40_500) }),
  ].map(toWire);
}

const RANGE = { from: '2026-11-30T00:00:00.000Z', to: '2026-12-01T00:00:00.000Z', raw: { from: 'now-1d', to: 'now' } };
const GRAFANA_RANGE = 'from=1796000000000&to=1796100000000';

type Call = { method: 'GET' | 'POST'; path: string; json?: unknown; raw?: { type: string; body: string } };

/** How to call each documented read route for project data, `tag` naming the session asked for. */
function readCalls(tag: string): Record<string, Call> {
  const get = (path: string): Call => ({ method: 'GET', path });
  const simpod = (path: string, json: unknown): Call => ({ method: 'POST', path, json });
  return {
    'GET /v1/events/schema': get('/v1/events/schema'),
    'GET /v1/breaks': get('/v1/breaks'),
    'GET /v1/breaks/external': get('/v1/breaks/external'),
    'GET /v1/breaks/agreement': get(`/v1/breaks/agreement?${GRAFANA_RANGE}`),
    'GET /v1/breaks/fingerprints': get(`/v1/breaks/fingerprints?${GRAFANA_RANGE}`),
    'GET /v1/breaks/:requestId': get(`/v1/breaks/${tag}-r2`),
    'GET /v1/sessions': get('/v1/sessions'),
    'GET /v1/sessions/:sessionId/turns': get(`/v1/sessions/${tag}-session/turns`),
    'GET /v1/stats': get(`/v1/stats?${GRAFANA_RANGE}&groupBy=model`),
    ...Object.fromEntries(
      ['avoidable', 'volatile', 'fanout', 'ttl', 'chronic', 'agreement'].flatMap((name) => [
        [`GET /v1/insights/${name}`, get(`/v1/insights/${name}?${GRAFANA_RANGE}`)],
        [`GET /grafana/insights-${name}`, get(`/grafana/insights-${name}?${GRAFANA_RANGE}`)],
      ]),
    ),
    'GET /insights': get('/insights?range=all'),
    'GET /': get('/?range=all'),
    'GET /sessions': get('/sessions?range=all'),
    'GET /sessions/:sessionId': get(`/sessions/${tag}-session`),
    'GET /breaks': get(`/breaks?range=all&sessionId=${tag}-session`),
    'GET /breaks/:requestId': get(`/breaks/${tag}-r2`),
    'GET /causes': get('/causes?range=all'),
    'GET /ui/:asset': get('/ui/ui.js'),
    'GET /grafana/summary': get(`/grafana/summary?${GRAFANA_RANGE}`),
    'GET /grafana/cache-rate': get(`/grafana/cache-rate?${GRAFANA_RANGE}&groupBy=model`),
    'GET /grafana/tokens': get(`/grafana/tokens?${GRAFANA_RANGE}`),
    'GET /grafana/breaks-over-time': get(`/grafana/breaks-over-time?${GRAFANA_RANGE}&groupBy=model`),
    'GET /grafana/totals': get(`/grafana/totals?${GRAFANA_RANGE}&groupBy=model`),
    'GET /grafana/break-causes': get(`/grafana/break-causes?${GRAFANA_RANGE}`),
    'GET /grafana/breaks': get(`/grafana/breaks?${GRAFANA_RANGE}`),
    'GET /grafana/changed-tools': get(`/grafana/changed-tools?${GRAFANA_RANGE}`),
    'GET /grafana/agreement': get(`/grafana/agreement?${GRAFANA_RANGE}`),
    'GET /grafana/verdicts': get(`/grafana/verdicts?${GRAFANA_RANGE}`),
    'GET /grafana/sessions': get(`/grafana/sessions?${GRAFANA_RANGE}`),
    'GET /grafana/turns': get(`/grafana/turns?${GRAFANA_RANGE}&sessionId=${tag}-session`),
    'GET /grafana/annotations': get(`/grafana/annotations?${GRAFANA_RANGE}`),
    'GET /grafana/values': get(`/grafana/values?${GRAFANA_RANGE}&dimension=model`),
    'GET /grafana/json': get('/grafana/json'),
    'POST /grafana/json/metrics': simpod('/grafana/json/metrics', {}),
    'POST /grafana/json/metric-payload-options': simpod('/grafana/json/metric-payload-options', { metric: 'cache-rate', payload: {}, name: 'model', range: RANGE }),
    'POST /grafana/json/query': simpod('/grafana/json/query', {
      range: RANGE,
      interval: '1h',
      intervalMs: 3_600_000,
      targets: [{ refId: 'A', target: 'breaks', payload: {} }, { refId: 'B', target: 'sessions', payload: {} }],
    }),
    'POST /grafana/json/variable': simpod('/grafana/json/variable', { payload: { target: 'sessionId' }, range: RANGE }),
    'POST /grafana/json/tag-keys': simpod('/grafana/json/tag-keys', {}),
    'POST /grafana/json/tag-values': simpod('/grafana/json/tag-values', { key: 'model', range: RANGE }),
    'GET /metrics': get('/metrics'),
    'GET /v1/alerts': get('/v1/alerts'),
    'GET /alerts': get('/alerts'),
    'GET /healthz': get('/healthz'),
    'GET /readyz': get('/readyz'),
  };
}

/** Each ingest route with a body that would store something of `tag`. */
function ingestCalls(tag: string): Record<string, Call> {
  const logs = { resourceLogs: [{ resource: {}, scopeLogs: [{ scope: {}, logRecords: [] }] }] };
  return {
    'POST /v1/events': { method: 'POST', path: '/v1/events', json: { events: session(tag) } },
    'POST /v1/logs': { method: 'POST', path: '/v1/logs', json: logs },
    'POST /v1/traces': { method: 'POST', path: '/v1/traces', json: { resourceSpans: [] } },
    'POST /v1/metrics': { method: 'POST', path: '/v1/metrics', json: { resourceMetrics: [] } },
    'POST /v1/breaks/external': {
      method: 'POST',
      path: '/v1/breaks/external',
      json: { breaks: [{ harness: 'claude-code', sessionId: `${tag}-session`, ts: '2026-11-30T10:00:30Z', reason: `tools changed (${tag})` }] },
    },
  };
}

async function call(server: TestServer, key: string, c: Call, extraHeaders: Record<string, string> = {}): Promise<{ status: number; text: string }> {
  const response = await fetch(`${server.url}${c.path}`, {
    method: c.method,
    headers: { authorization: `Bearer ${key}`, ...(c.json !== undefined ? { 'content-type': 'application/json' } : {}), ...extraHeaders },
    ...(c.json !== undefined ? { body: JSON.stringify(c.json) } : {}),
  });
  return { status: response.status, text: await response.text() };
}

describe('tenancy', () => {
  it('walks every route: keys read and write only their own project, read keys cannot ingest', { timeout: 60_000 }, async () => {
    const db = await freshDb('tenancy');
    const alphaIngest = await createKey(db, 'alpha', 'ingest');
    const alphaRead = await createKey(db, 'alpha', 'read');
    const beta = await createKey(db, 'beta', 'ingest,read');
    // Alert rules that every project's data breaks, over a window that holds it all.
    const server = await startOtlpServer({ db, alerts: { rules: { cacheRateBelow: 1, newBreakReason: true, windowMs: 3650 * 86_400_000, minTurns: 1 }, everyMs: 1000, webhook: undefined } });

    // Every documented route has a case: a new route must say how it keeps projects apart.
    const documented = ROUTE_DOCS.map((r) => `${r.method} ${r.path}`).sort();
    expect([...Object.keys(readCalls('x')), ...Object.keys(ingestCalls('x'))].sort()).toEqual(documented);

    // Each project writes through every ingest route, and over gRPC.
    for (const [tag, key] of [['alpha', alphaIngest], ['beta', beta]] as const) {
      for (const c of Object.values(ingestCalls(tag))) expect((await call(server, key, c)).status, `${tag} ${c.path}`).toBe(200);
      const grpc = logExporter(server, 'grpc', { authorization: `Bearer ${key}` });
      const records = [turn(`${tag}-g1`, { sessionId: `${tag}-grpc`, model: `model-${tag}`, usage: usage(0, 9_000) })].map((e) => nativeRecord(toWire(e)));
      expect((await emitLogs(grpc, records)).map((r) => r.code)).toEqual([0]);
    }

    // A read key cannot ingest, over HTTP or gRPC.
    for (const [route, c] of Object.entries(ingestCalls('alpha'))) expect((await call(server, alphaRead, c)).status, route).toBe(403);
    const readOverGrpc = await emitLogs(logExporter(server, 'grpc', { authorization: `Bearer ${alphaRead}` }), [nativeRecord(toWire(turn('alpha-denied')))]);
    expect(readOverGrpc[0]!.code).not.toBe(0);
    // An ingest key cannot read.
    expect((await call(server, alphaIngest, readCalls('alpha')['GET /v1/sessions']!)).status).toBe(403);

    // The alerts are evaluated every second: both projects' are there before the walk.
    for (const key of [alphaRead, beta]) {
      const deadline = Date.now() + 15_000;
      while (!(await call(server, key, readCalls('x')['GET /v1/alerts']!)).text.includes('new_break_reason')) {
        if (Date.now() > deadline) throw new Error('no alert within 15 s');
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }

    // Reading: each project sees its own data and nothing of the other's, on every route.
    const sees = { alpha: new Set<string>(), beta: new Set<string>() };
    for (const [me, other, key] of [['alpha', 'beta', alphaRead], ['beta', 'alpha', beta]] as const) {
      for (const [route, c] of Object.entries(readCalls(me))) {
        const { status, text } = await call(server, key, c);
        expect(status, `${me} ${route}`).toBe(200);
        expect(text.includes(other), `${me} sees ${other} on ${route}`).toBe(false);
        if (text.includes(me)) sees[me].add(route);
        // The project a reader thread answers for is set by the server; a client naming another is not heard.
        const spoofed = await call(server, key, c, { 'x-cachebreak-project': other });
        expect(spoofed.text.includes(other), `${me} names ${other} in a header on ${route}`).toBe(false);
        // Asking for the other project's session by name finds none of its data (the name may be echoed in a 404).
        const session = readCalls(other)[route]!;
        if (session.path !== c.path) {
          const answer = (await call(server, key, session)).text;
          for (const secret of [`${other}-r1`, `${other}-g1`, `model-${other}`]) expect(answer.includes(secret), `${me} asks for ${other} on ${route}`).toBe(false);
        }
      }
    }
    // Where data is listed, each project does see its own (or the walk would prove nothing).
    const listing = ['GET /v1/breaks', 'GET /v1/breaks/external', 'GET /v1/sessions', 'GET /v1/sessions/:sessionId/turns', 'GET /v1/stats', 'GET /v1/breaks/:requestId', 'GET /', 'GET /sessions', 'GET /sessions/:sessionId', 'GET /breaks', 'GET /breaks/:requestId', 'GET /causes', 'GET /v1/insights/avoidable', 'GET /v1/insights/ttl', 'GET /insights', 'GET /grafana/insights-ttl', 'GET /grafana/breaks', 'GET /grafana/sessions', 'GET /grafana/turns', 'GET /grafana/values', 'POST /grafana/json/query', 'POST /grafana/json/variable', 'POST /grafana/json/tag-values', 'GET /metrics', 'GET /v1/alerts', 'GET /alerts'];
    for (const route of listing) {
      expect(sees.alpha.has(route), `alpha on ${route}`).toBe(true);
      expect(sees.beta.has(route), `beta on ${route}`).toBe(true);
    }
  });
});
