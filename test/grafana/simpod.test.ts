// The simPod JSON datasource protocol against the demo database: every
// response goes through @grafana/data's toDataFrame, as the plugin does, and
// each frame is checked field by field against the query's columns, so the
// two renderings of one query stay the same data.
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { QUERIES } from '../../src/serve/grafana/queries/index.js';
import { demoApp, DEMO_RANGE } from './demo.js';

// @grafana/data's ES build does not load in Node; its CommonJS build does, once a DOM is there.
const require = createRequire(import.meta.url);
require('global-jsdom/register');
const { toDataFrame } = require('@grafana/data') as typeof import('@grafana/data');

const RANGE = {
  from: new Date(DEMO_RANGE.from).toISOString(),
  to: new Date(DEMO_RANGE.to).toISOString(),
  raw: { from: 'now-24h', to: 'now' },
};

type App = Awaited<ReturnType<typeof demoApp>>;

async function post(app: App, path: string, body: unknown): Promise<{ status: number; body: any }> {
  const response = await app.app.request(`/grafana/json${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() };
}

/** A /query request as Grafana sends it, targets already interpolated. */
function request(targets: object[], extra: object = {}) {
  return {
    panelId: 1,
    range: RANGE,
    rangeRaw: RANGE.raw,
    interval: '1h',
    intervalMs: 3_600_000,
    maxDataPoints: 550,
    targets,
    scopedVars: { __interval: { text: '1h', value: '1h' } },
    ...extra,
  };
}

/** The payload each query needs to have data in the demo. */
async function payloadFor(app: App, name: string): Promise<Record<string, unknown>> {
  if (name !== 'turns') return {};
  const { body } = await post(app, '/variable', { payload: { target: 'sessionId' }, range: RANGE });
  return { sessionId: body[0].__value };
}

const FIELD_TYPE = { time: 'time', string: 'string', number: 'number' } as const;

describe('simPod JSON datasource, /grafana/json', () => {
  it('answers the connection test, and lists every query as a metric with its payload fields', async () => {
    const app = await demoApp();
    expect((await app.app.request('/grafana/json')).status).toBe(200);
    expect((await app.app.request('/grafana/json/')).status).toBe(200);
    const { status, body } = await post(app, '/metrics', {});
    expect(status).toBe(200);
    expect(body.map((m: any) => m.value)).toEqual(QUERIES.map((q) => q.name));
    const cacheRate = body.find((m: any) => m.value === 'cache-rate');
    expect(cacheRate.payloads).toEqual([
      expect.objectContaining({ name: 'groupBy', type: 'select', options: ['none', 'model', 'provider', 'agentId'].map((v) => ({ label: v, value: v })) }),
      expect.objectContaining({ name: 'model', type: 'multi-select' }),
      expect.objectContaining({ name: 'provider', type: 'multi-select' }),
      expect.objectContaining({ name: 'agentId', type: 'multi-select' }),
    ]);
    const models = await post(app, '/metric-payload-options', { metric: 'cache-rate', payload: {}, name: 'model', range: RANGE });
    expect(models.body).toContainEqual({ label: 'claude-sonnet-4-5', value: 'claude-sonnet-4-5' });
    const groups = await post(app, '/metric-payload-options', { metric: 'cache-rate', payload: {}, name: 'groupBy' });
    expect(groups.body.map((o: any) => o.value)).toEqual(['none', 'model', 'provider', 'agentId']);
    expect((await post(app, '/metric-payload-options', { metric: 'breaks', payload: {}, name: 'limit' })).body).toEqual([]);
  });

  it('renders every query so that toDataFrame gives the query\'s columns with their types', async () => {
    const app = await demoApp();
    for (const query of QUERIES) {
      const payload = await payloadFor(app, query.name);
      const { status, body } = await post(app, '/query', request([{ target: query.name, refId: 'A', payload }]));
      expect(status, `${query.name}: ${JSON.stringify(body).slice(0, 300)}`).toBe(200);
      expect(body.length, query.name).toBeGreaterThan(0);
      // The same query through Infinity: the rendering differs, the columns do not.
      const search = new URLSearchParams({ from: String(DEMO_RANGE.from), to: String(DEMO_RANGE.to), interval: '3600000', ...(payload as Record<string, string>) });
      const rows = (await app.get(`/grafana/${query.name}?${search}`)).body as Record<string, unknown>[];
      const columns = Object.keys(rows[0]!);
      for (const result of body) {
        const frame = toDataFrame(result);
        expect(frame.refId, query.name).toBe('A');
        const fields = frame.fields.map((f) => [f.name, f.type]);
        if (result.type === 'table') {
          expect(fields, query.name).toEqual(result.columns.map((c: any) => [c.text, FIELD_TYPE[c.type as keyof typeof FIELD_TYPE]]));
          expect(fields.map(([name]) => name), query.name).toEqual(columns);
          expect(frame.length, query.name).toBe(rows.length);
        } else {
          expect(fields, query.name).toEqual([
            ['Time', 'time'],
            ['Value', 'number'],
          ]);
          expect(frame.name, query.name).toBe(result.target);
          expect(columns[0], query.name).toBe('ts');
          for (const value of frame.fields[1]!.values) expect(value === null || typeof value === 'number', query.name).toBe(true);
        }
      }
    }
  });

  it('names series by their labels, and keeps null (no data) apart from 0', async () => {
    const app = await demoApp();
    const { body } = await post(app, '/query', request([{ target: 'cache-rate', refId: 'B', payload: { groupBy: 'model' } }]));
    const names = body.map((s: any) => s.target);
    expect(names).toContain('claude-sonnet-4-5');
    // The proxy that strips cache fields reports nothing: every point is null, none is 0.
    const proxied = body.find((s: any) => s.target === 'anthropic/claude-sonnet-4.5');
    expect(proxied.datapoints.every(([value]: [number | null]) => value === null)).toBe(true);
    const frame = toDataFrame(proxied);
    expect(frame.fields[1]!.values.every((v: unknown) => v === null)).toBe(true);
  });

  it('takes payloads as objects or as code-mode JSON text, and ad hoc filters beside the targets', async () => {
    const app = await demoApp();
    const all = await post(app, '/query', request([{ target: 'summary', refId: 'A' }]));
    const sonnet = await post(app, '/query', request([{ target: 'summary', refId: 'A', payload: '{"model": "claude-sonnet-4-5"}' }]));
    const adHoc = await post(
      app,
      '/query',
      request([{ target: 'summary', refId: 'A' }], { filters: [{ key: 'model', operator: '=', value: 'claude-sonnet-4-5' }] }),
    );
    const several = await post(app, '/query', request([{ target: 'summary', refId: 'A', payload: { model: ['claude-sonnet-4-5', 'claude-opus-4-5'] } }]));
    const turns = (r: { body: any }) => r.body[0].rows[0][0];
    expect(turns(sonnet)).toBeLessThan(turns(all));
    expect(turns(adHoc)).toBe(turns(sonnet));
    expect(turns(several)).toBeGreaterThan(turns(sonnet));
    expect(turns(several)).toBeLessThan(turns(all));
  });

  it('serves annotations through /query: a time field first, then the text', async () => {
    const app = await demoApp();
    const { body } = await post(app, '/query', request([{ target: 'annotations', refId: 'Anno', payload: { reason: 'tools_order_changed' } }]));
    const frame = toDataFrame(body[0]);
    expect(frame.fields.map((f) => [f.name, f.type])).toEqual([
      ['ts', 'time'],
      ['text', 'string'],
      ['title', 'string'],
      ['tags', 'string'],
    ]);
    expect(frame.length).toBeGreaterThan(0);
    expect(frame.fields[1]!.values[0]).toMatch(/^tools_order_changed in session /);
  });

  it('lists variable values, tag keys and tag values', async () => {
    const app = await demoApp();
    const models = await post(app, '/variable', { payload: { target: 'model' }, range: RANGE });
    expect(models.body).toContainEqual({ __text: 'claude-sonnet-4-5', __value: 'claude-sonnet-4-5' });
    expect((await post(app, '/variable', { payload: '{"dimension": "reason"}', range: RANGE })).body).toContainEqual({
      __text: 'tools_order_changed',
      __value: 'tools_order_changed',
    });
    expect((await post(app, '/variable', { payload: 'provider', range: RANGE })).body).toContainEqual({ __text: 'anthropic', __value: 'anthropic' });
    const keys = await post(app, '/tag-keys', {});
    expect(keys.body).toEqual(['model', 'provider', 'agentId', 'reason', 'sessionId'].map((text) => ({ type: 'string', text })));
    const agents = await post(app, '/tag-values', { key: 'agentId', range: RANGE });
    expect(agents.body).toContainEqual({ text: 'main' });
  });

  it('answers mistakes with 400 naming what is wrong', async () => {
    const app = await demoApp();
    const cases: [unknown, string][] = [
      ['{not json', 'the body is not JSON'],
      [request([{ target: 'nope', refId: 'A' }]), 'target: no metric "nope"'],
      [request([{ target: 'cache-rate', refId: 'A', payload: { groupBy: 'session' } }]), 'groupBy: expected one of none, model, provider, agentId'],
      [request([{ target: 'sessions', refId: 'A', payload: { model: 'x' } }]), 'model: this query cannot be filtered by model'],
      [request([{ target: 'summary', refId: 'A' }], { filters: [{ key: 'model', operator: '!=', value: 'x' }] }), 'operator "!=" on model is not supported'],
    ];
    for (const [body, message] of cases) {
      const reply = await post(app, '/query', body);
      expect(reply.status, message).toBe(400);
      expect(reply.body.error.message).toContain(message);
    }
    expect((await post(app, '/tag-values', { key: 'session' })).status).toBe(400);
  });
});
