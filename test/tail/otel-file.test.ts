// One mapping, two transports: a telemetry outfile (SDK objects dumped by the
// real OpenTelemetry SDK, as Qwen Code and Gemini CLI write them) yields
// exactly what the same records yield over OTLP.
import { copyFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { CacheEvent } from '../../src/core/types.js';
import type { Telemetry } from '../../src/ingest/otlp/records.js';
import type { TokenPoint } from '../../src/store/store.js';
import { createMappingContext, mapTelemetry } from '../../src/ingest/otlp/sources/index.js';
import { telemetryOfDump } from '../../src/ingest/tail/formats/otel-sdk.js';
import { objectFramer } from '../../src/ingest/tail/frames/objects.js';
import { freshStore, tempDir } from '../helpers.js';
import { fixture, mapped, mappedPerRecord, store } from '../otlp/sources/helpers.js';
import { follow, turnStates, waitFor } from './harness.js';

const QWEN_SESSION = '7f3c9a2e-4b1d-4e8a-9c6f-2d5e8a1b3c4d';
const GEMINI_SESSION = 'b2e4f6a8-1c3d-4e5f-8a9b-0c1d2e3f4a5b';

/** Every object of an outfile, as Telemetry. */
function dumps(name: string): Telemetry[] {
  const bytes = readFileSync(new URL(`../fixtures/otel-file/${name}`, import.meta.url));
  const framer = objectFramer();
  const out: Telemetry[] = [];
  for (let f = framer.next(bytes, 0); f; f = framer.next(bytes, f.next)) {
    expect(f.kind).toBe('unit');
    out.push(telemetryOfDump(JSON.parse(bytes.toString('utf8', f.start, f.end))).telemetry);
  }
  return out;
}

function mapEach(objects: Telemetry[]): { events: CacheEvent[]; points: TokenPoint[] } {
  const context = createMappingContext();
  const events: CacheEvent[] = [];
  const points: TokenPoint[] = [];
  for (const t of objects) {
    const m = mapTelemetry(t, context);
    expect(m.rejected).toEqual([]);
    events.push(...m.events);
    points.push(...m.tokenPoints);
  }
  return { events, points };
}

type Point = { series: string };
const withoutSeries = ({ series: _, ...rest }: Point) => rest;
/** Which points belong to the same series, as index lists. */
function partition(points: Point[]): number[][] {
  const groups = new Map<string, number[]>();
  points.forEach((p, i) => groups.set(p.series, [...(groups.get(p.series) ?? []), i]));
  return [...groups.values()];
}

const byRequest = (events: CacheEvent[]) => [...events].sort((a, b) => `${a.requestId}${a.type}`.localeCompare(`${b.requestId}${b.type}`));

describe('telemetry outfile → Telemetry', () => {
  for (const [file, otlp, service] of [
    ['qwen-code-0.24.4.log', 'qwen-code/0.24.4.json', 'qwen-code'],
    ['gemini-cli-0.61.0.log', 'gemini-cli/0.61.0.json', 'gemini-cli'],
  ] as const) {
    it(`${file}: the same events and token points as the OTLP records`, () => {
      const fromFile = mapEach(dumps(file));
      // An outfile holds one record per object: mapped as OTLP exports of one record each (a Gemini CLI call keeps its derived id).
      const fromOtlp = mappedPerRecord(fixture(otlp));
      expect(byRequest(fromFile.events)).toEqual(byRequest(fromOtlp.events));
      // In an outfile the metrics share the harness's one resource, so series ids (which hash it) differ; the series do not.
      const metricPoints = fixture('metrics/token-usage.json').points.filter((p) => p.resource['service.name'] === service);
      const expected = mapped({ logs: [], spans: [], points: metricPoints }).tokenPoints;
      expect(fromFile.points.map(withoutSeries)).toEqual(expected.map(withoutSeries));
      expect(partition(fromFile.points)).toEqual(partition(expected));
      expect(fromFile.events.length).toBeGreaterThan(0);
    });
  }

  it('reads spans, log records and metric batches with the fields the SDK dumped, "[Circular]" times included', () => {
    const objects = dumps('qwen-code-0.24.4.log');
    const span = objects.find((t) => t.spans.length > 0);
    const log = objects.find((t) => t.logs.length > 0);
    expect(span!.spans[0]).toMatchObject({
      name: 'qwen-code.llm_request',
      traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
      startMs: Date.parse('2026-11-30T10:00:00.010Z'),
      endMs: Date.parse('2026-11-30T10:00:04.210Z'),
      scope: { name: 'qwen-code', version: '0.24.4' },
    });
    expect(span!.spans[0]!.resource['service.name']).toBe('qwen-code');
    expect(log!.logs[0]).toMatchObject({ timeMs: Date.parse('2026-11-30T10:00:00.000Z'), severityNumber: 9, body: 'User prompt. Length: 78.' });
    const batch = dumps('gemini-cli-0.61.0.log').find((t) => t.points.length > 1)!;
    expect(new Set(batch.points.map((p) => p.timeMs)).size).toBe(1);
  });

  it('reads the field names of 1.x SDKs (public hrTime, instrumentationLibrary, resource _attributes)', () => {
    const { telemetry } = telemetryOfDump({
      resource: { _attributes: { 'service.name': 'gemini-cli' }, asyncAttributesPending: false },
      instrumentationLibrary: { name: 'gemini-cli', version: 'v1' },
      hrTime: [1796032800, 250000000],
      hrTimeObserved: [1796032801, 0],
      spanContext: { traceId: 'AB', spanId: 'CD', traceFlags: 1 },
      attributes: { 'event.name': 'gemini_cli.config' },
      _body: 'CLI configuration loaded.',
      _severityNumber: 9,
    });
    expect(telemetry.logs).toEqual([
      {
        resource: { 'service.name': 'gemini-cli' },
        scope: { name: 'gemini-cli', version: 'v1' },
        timeMs: 1796032800250,
        eventName: '',
        severityNumber: 9,
        body: 'CLI configuration loaded.',
        attributes: { 'event.name': 'gemini_cli.config' },
        traceId: 'ab',
        spanId: 'cd',
      },
    ]);
    expect(() => telemetryOfDump({ hello: 'world' })).toThrow(/not a span, log record or metric batch/);
  });
});

describe('tailing an outfile', () => {
  it('stores the turns the OTLP path stores, for Qwen Code and Gemini CLI', async () => {
    const dir = tempDir();
    for (const name of ['qwen-code-0.24.4.log', 'gemini-cli-0.61.0.log']) {
      copyFileSync(new URL(`../fixtures/otel-file/${name}`, import.meta.url), join(dir, name));
    }
    const tailed = freshStore();
    const following = await follow(tailed, [join(dir, '*.log')], { fromStart: true });
    const { store: reference } = await store(mapped(fixture('qwen-code/0.24.4.json')), mappedPerRecord(fixture('gemini-cli/0.61.0.json')));
    const expected = await turnStates(reference, [QWEN_SESSION, GEMINI_SESSION]);
    const count = Object.keys(expected).length;
    expect(count).toBe(12);
    await waitFor('all turns', async () => {
      const got = await turnStates(tailed, [QWEN_SESSION, GEMINI_SESSION]);
      return Object.keys(got).length === count ? got : undefined;
    });
    await following.tailer.settled();
    expect(await turnStates(tailed, [QWEN_SESSION, GEMINI_SESSION])).toEqual(expected);
    expect(await tailed.sessionTurns('default', GEMINI_SESSION)).toEqual(await reference.sessionTurns('default', GEMINI_SESSION));
    expect(following.rejected).toEqual([]);
  });
});
