// The decoders cachebreak exposes to untrusted bytes, each with a corpus of
// valid samples to mutate. A target must answer every input with a result or
// a clear rejection (an error naming a field, or a CachebreakError with a
// message and a hint) — anything else is a failure.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildApp } from '../../src/app.js';
import { Authenticator } from '../../src/auth/authenticator.js';
import { SERVICE_DETECTION } from '../../src/prices/index.js';
import { CachebreakError } from '../../src/errors.js';
import { DEFAULT_LIMITS } from '../../src/ingest/limits.js';
import { Pipeline } from '../../src/ingest/pipeline.js';
import { SqliteStore } from '../../src/store/sqlite/store.js';
import { Counters } from '../../src/telemetry/counters.js';
import { createLogger } from '../../src/telemetry/logfmt.js';
import { decodeEvents } from '../../src/ingest/http/decode.js';
import { toCacheEvent } from '../../src/ingest/http/events.js';
import { decodeRequest, DecodeError, type Encoding, type Signal } from '../../src/ingest/otlp/decode/index.js';
import { createMappingContext, mapTelemetry } from '../../src/ingest/otlp/sources/index.js';
import { emptyDecoded } from '../../src/ingest/tail/formats/decoder.js';
import { decoderOf, framerOf, FORMATS, type Format } from '../../src/ingest/tail/formats/index.js';
import { otlpCorpus } from './otlp-corpus.js';
import { loadRequest, REQUEST_FIXTURES } from '../core/request-fixtures.js';
import { toWire, turn } from '../core/scenario.js';

export interface FuzzTarget {
  name: string;
  /** Valid inputs to start mutations from. */
  corpus: Buffer[];
  /** Whether inputs are JSON text (enables structural mutations). */
  json: boolean;
  /** Inputs per CI run, when fewer than the decoders' (a target that stores and reads back is slower). */
  ciInputs?: number;
  /** Throws (or rejects) only when the decoder misbehaves. */
  run(input: Buffer): void | Promise<void>;
}

export class UnclearRejection extends Error {}

/** A CachebreakError with a message and a hint (or an OTLP DecodeError with a message) is a clear rejection; anything else thrown is a failure. */
export function expectClear(error: unknown): void {
  if (error instanceof CachebreakError && error.message.length > 0 && error.hint.length > 0) return;
  if (error instanceof DecodeError && error.message.length > 0) return;
  throw error;
}

/** Decodes an OTLP request and maps what it holds, as the receiver does. */
function otlp(signal: Signal, encoding: Encoding, input: Buffer): void {
  let decoded;
  try {
    decoded = decodeRequest(signal, encoding, input);
  } catch (error) {
    expectClear(error);
    return;
  }
  for (const rejected of mapTelemetry(decoded.telemetry, createMappingContext()).rejected) expectNamed(rejected.record, rejected.error);
}

/** Frames and decodes a file's bytes as the tail does, as if they were all appended at once. */
function tail(format: Format, input: Buffer): void {
  const framer = framerOf(format);
  const decoder = decoderOf(format, { path: '/tmp/fuzz/0f1e2d3c.txt' });
  const out = emptyDecoded();
  let from = 0;
  for (let guard = 0; guard <= input.length; guard++) {
    const frame = framer.next(input, from);
    if (!frame) break;
    if (frame.next <= from) throw new UnclearRejection(`the ${format} framer did not advance at byte ${from}`);
    if (frame.kind === 'unit') decoder.decode(input, frame.start, frame.end, 1, out);
    else if (frame.kind === 'bad') expectNamed('frame', frame.error ?? '');
    from = frame.next;
  }
  for (const rejected of out.rejected) expectNamed(`line ${rejected.line}`, rejected.error);
}

function expectNamed(field: string, message: string): void {
  if (field.length === 0 || message.length === 0) throw new UnclearRejection(`a rejection without a field or message: ${JSON.stringify({ field, message })}`);
}

function decodeAll(input: Buffer, type: string): void {
  let values;
  try {
    values = decodeEvents(input, type);
  } catch (error) {
    expectClear(error);
    return;
  }
  for (const value of values) {
    if (!value.ok) {
      expectNamed('event', value.error);
      continue;
    }
    const converted = toCacheEvent(value.value);
    if (!converted.ok) expectNamed(converted.field, converted.error);
  }
}

const FIXTURES = fileURLToPath(new URL('../fixtures/', import.meta.url));

/** Every shape of event a client sends: turns, split snapshot/usage, raw bodies, each provider's raw usage. */
function eventCorpus(): Record<string, unknown>[] {
  const events: Record<string, unknown>[] = [toWire(turn('r1')), toWire(turn('r2', { expectMiss: 'compaction', messageHashes: ['a', 'b'] }))];
  const usageDir = join(FIXTURES, 'usage');
  for (const provider of readdirSync(usageDir)) {
    for (const file of readdirSync(join(usageDir, provider))) {
      const fixture = JSON.parse(readFileSync(join(usageDir, provider, file), 'utf8')) as { raw?: unknown; provider?: string };
      events.push({ type: 'usage', requestId: `u_${provider}_${file}`, sessionId: 's', ts: 1796032800000, provider, usage: fixture.raw });
    }
  }
  events.push(...freeFormCorpus());
  for (const name of REQUEST_FIXTURES) {
    const body = loadRequest(name);
    events.push({
      type: 'snapshot', requestId: `s_${name}`, sessionId: 's', ts: '2026-11-30T10:00:00Z', model: String(body.model ?? 'm'),
      ...(body.system !== undefined ? { system: body.system } : {}),
      ...(Array.isArray(body.tools) ? { toolDefinitions: body.tools } : {}),
    });
  }
  return events;
}

/**
 * Free-form fields (diagnostics, params, thinking, toolChoice, raw tool
 * definitions of every shape, an MCP server_label among them), times at the
 * edges of what events may have and past them (epoch seconds, beyond a JS
 * Date), and a request id that two sessions claim.
 */
function freeFormCorpus(): Record<string, unknown>[] {
  const base = { type: 'turn', sessionId: 's', model: 'claude-sonnet-4-5', provider: 'anthropic', uncachedInputTokens: 10, cacheReadInputTokens: 2_000 };
  return [
    {
      ...base, requestId: 'f1', ts: '2000-01-01T00:00:00Z', endTs: 946684801000,
      diagnostics: { cache_miss_reason: { type: 'tools_changed', tools: ['a', 'b'] } },
      params: { temperature: 0.7, speed: 'fast', nested: { a: [1, 2, { b: null }] } },
      thinking: { type: 'enabled', budget_tokens: 8000 },
      toolChoice: { type: 'tool', name: 'read_file' },
      toolDefinitions: [
        { name: 'read_file', input_schema: { type: 'object', properties: { path: { type: 'string' } } }, cache_control: { type: 'ephemeral', ttl: '1h' } },
        { type: 'function', function: { name: 'shell', parameters: {} } },
        { type: 'mcp', server_label: 'github', server_url: 'https://example.com/mcp' },
        { type: 'web_search' },
        { functionDeclarations: [{ name: 'lookup', parameters: {} }] },
      ],
    },
    { ...base, requestId: 'f2', ts: 4_102_444_799_999, toolChoice: 'auto', diagnostics: 'miss' },
    { ...base, requestId: 'f3', ts: 1_796_032_800 },
    { ...base, requestId: 'f4', ts: 8_640_000_000_000_001, endTs: 9_007_199_254_740_991 },
    { ...base, requestId: 'f1', sessionId: 'other', ts: 1_796_032_800_000 },
  ];
}

/** Telemetry outfiles written by the harnesses' own exporters (test/fixtures/otel-file/). */
const OUTFILES = ['gemini-cli-0.61.0.log', 'qwen-code-0.24.4.log'];

function tailCorpus(format: Format, events: Record<string, unknown>[]): Buffer[] {
  switch (format) {
    case 'ndjson':
      return [Buffer.from(events.map((e) => JSON.stringify(e)).join('\n') + '\n')];
    case 'claude-debug':
      return [Buffer.from(
        '2026-11-30T10:00:00.000Z [DEBUG] Stream started\n' +
          '2026-11-30T10:00:04.000Z [WARN] [PROMPT CACHE BREAK] tools changed (+1/-0 tools) [source=repl_main_thread, call #7, cache read: 48000 → 0, creation: 49100, diff: /tmp/claude-0/cache-break-ab12.diff]\n',
      )];
    case 'qwen-debug':
      return [Buffer.from('2026-11-30T10:00:00.000Z [INFO] [API] [trace_id=abc span_id=def] request sent\n2026-11-30T10:00:01.000Z [DEBUG] usage received\n')];
    case 'otel-file':
      return OUTFILES.map((file) => readFileSync(join(FIXTURES, 'otel-file', file)));
    case 'qwen-openai':
      return readdirSync(join(FIXTURES, 'qwen-openai')).map((file) => readFileSync(join(FIXTURES, 'qwen-openai', file)));
  }
}

/**
 * POST /v1/breaks/external: its body decoder lives in the route (src/ingest/http/external-breaks.ts,
 * not exported), so the target is the route itself, in the real app on an in-memory database. A clear
 * answer is a 200 that accounts for every report (accepted, duplicate or rejected with its field and
 * reason) or a 4xx whose error has a code, a message and a hint; a 5xx or anything else is a failure.
 */
function externalBreaksTarget(): FuzzTarget {
  let app: ReturnType<typeof buildApp> | undefined;
  let store: SqliteStore | undefined;
  let runs = 0;
  const appOf = () => {
    if (app) return app;
    store = new SqliteStore(':memory:', SERVICE_DETECTION);
    const counters = new Counters();
    const log = createLogger(() => {});
    const pipeline = new Pipeline(store, counters, log);
    const auth = new Authenticator(store, { openProject: 'default', openWithoutKeys: true, rateLimit: { perSecond: 1e9, burst: 1e9 }, now: Date.now });
    app = buildApp({ store, pipeline, counters, log, bodyLimit: 1024 * 1024, auth, limits: DEFAULT_LIMITS, now: Date.now });
    return app;
  };
  const T = '2026-11-30T10:00:04.000Z';
  const full = {
    harness: 'claude-code', sessionId: 'sess-1', agentId: 'main', source: 'repl_main_thread', ts: T, reason: 'tools changed (+1/-0 tools)',
    callNumber: 7, previousCacheReadTokens: 48_000, currentCacheReadTokens: 0, cacheCreationTokens: 49_100,
    diffPath: '/tmp/claude-0/cache-break-ab12.diff', file: '/home/u/.claude/debug/sess-1.txt', line: 12,
  };
  const minimal = { harness: 'claude-code', sessionId: 'sess-2', ts: 1796032804000, reason: 'system prompt changed' };
  const nulls = { ...minimal, agentId: 'agent:builtin:explore', callNumber: null, previousCacheReadTokens: null, currentCacheReadTokens: null, cacheCreationTokens: null, diffPath: null, file: null, line: null };
  return {
    name: 'external-breaks-json',
    corpus: [{ breaks: [full] }, { breaks: [minimal, nulls] }, { breaks: [full, minimal, nulls, { ...full, callNumber: 8 }] }, { breaks: [] }].map((b) => Buffer.from(JSON.stringify(b))),
    json: true,
    async run(input) {
      // Retention of a sort: the fuzzer's reports would otherwise pile up in memory.
      if (++runs % 10_000 === 0) store?.sqlite.exec('DELETE FROM external_breaks');
      const response = await appOf().request('/v1/breaks/external', { method: 'POST', headers: { 'content-type': 'application/json' }, body: new Uint8Array(input) });
      const text = await response.text();
      let body: any;
      try {
        body = JSON.parse(text);
      } catch {
        throw new UnclearRejection(`${response.status} with a body that is not JSON: ${text.slice(0, 200)}`);
      }
      if (response.status === 200) {
        const sent = (JSON.parse(input.toString('utf8')) as { breaks: unknown[] }).breaks;
        const { accepted, duplicates, rejected } = body as { accepted: number; duplicates: number; rejected: { index: number; field: string; error: string }[] };
        if (accepted + duplicates + rejected.length !== sent.length) {
          throw new UnclearRejection(`200 for ${sent.length} reports, but ${accepted} accepted + ${duplicates} duplicates + ${rejected.length} rejected`);
        }
        for (const r of rejected) expectNamed(r.field, r.error);
        return;
      }
      const error = body?.error;
      if (response.status >= 500 || response.status < 400 || !error?.code || !error?.message || !error?.hint) {
        throw new UnclearRejection(`${response.status}: ${text.slice(0, 200)}`);
      }
    },
  };
}

/**
 * POST /v1/events through to the store, then the reads, in the real app on an
 * in-memory database: whatever the events hold, the answer accounts for each
 * (accepted, duplicate or rejected with its field) or is a clear 4xx, and no
 * read fails afterwards. A 5xx anywhere is a failure.
 */
function eventsStoreTarget(events: Record<string, unknown>[]): FuzzTarget {
  let current: { app: ReturnType<typeof buildApp>; store: SqliteStore } | undefined;
  let runs = 0;
  const appOf = () => {
    // A new database now and then: what the fuzzer stores would otherwise pile up.
    if (current && runs % 2_000 !== 0) return current.app;
    void current?.store.close();
    const store = new SqliteStore(':memory:', SERVICE_DETECTION);
    const counters = new Counters();
    const log = createLogger(() => {});
    const pipeline = new Pipeline(store, counters, log);
    const auth = new Authenticator(store, { openProject: 'default', openWithoutKeys: true, rateLimit: { perSecond: 1e9, burst: 1e9 }, now: Date.now });
    current = { store, app: buildApp({ store, pipeline, counters, log, bodyLimit: 1024 * 1024, auth, limits: DEFAULT_LIMITS, now: Date.now }) };
    return current.app;
  };
  const answer = async (path: string, init?: RequestInit) => {
    const response = await appOf().request(path, init);
    const text = await response.text();
    if (response.status >= 500) throw new UnclearRejection(`${path}: ${response.status}: ${text.slice(0, 200)}`);
    return { status: response.status, text };
  };
  return {
    name: 'events-store',
    ciInputs: 500,
    corpus: [Buffer.from(JSON.stringify(events)), ...events.map((e) => Buffer.from(JSON.stringify([e, { ...e, requestId: `${String(e.requestId)}-2` }])))],
    json: true,
    async run(input) {
      runs++;
      const reply = await answer('/v1/events', { method: 'POST', headers: { 'content-type': 'application/json' }, body: new Uint8Array(input) });
      if (reply.status === 200) {
        const sent = decodeEvents(input, 'application/json').length;
        const { accepted, duplicates, rejected } = JSON.parse(reply.text) as { accepted: number; duplicates: number; rejected: { field: string; error: string }[] };
        if (accepted + duplicates + rejected.length !== sent) {
          throw new UnclearRejection(`200 for ${sent} events, but ${accepted} accepted + ${duplicates} duplicates + ${rejected.length} rejected`);
        }
        for (const r of rejected) expectNamed(r.field, r.error);
      } else if (!JSON.parse(reply.text)?.error?.hint) throw new UnclearRejection(`${reply.status}: ${reply.text.slice(0, 200)}`);
      for (const path of ['/v1/sessions?limit=1000', '/v1/breaks?limit=1000', '/v1/sessions/s/turns', '/v1/stats']) await answer(path);
    },
  };
}

export async function targets(): Promise<FuzzTarget[]> {
  const events = eventCorpus();
  const corpus = await otlpCorpus();
  const otlpTargets = (['logs', 'traces', 'metrics'] as Signal[]).flatMap((signal) =>
    (['protobuf', 'json'] as Encoding[]).map((encoding): FuzzTarget => ({
      name: `otlp-${signal}-${encoding}`,
      corpus: corpus[signal][encoding],
      json: encoding === 'json',
      run: (input) => otlp(signal, encoding, input),
    })),
  );
  const tailTargets = FORMATS.map((format): FuzzTarget => ({
    name: `tail-${format}`,
    corpus: tailCorpus(format, events),
    json: false,
    run: (input) => tail(format, input),
  }));
  return [
    ...otlpTargets,
    ...tailTargets,
    {
      name: 'events-json',
      corpus: [Buffer.from(JSON.stringify({ events })), Buffer.from(JSON.stringify(events.slice(0, 3))), ...events.map((e) => Buffer.from(JSON.stringify([e])))],
      json: true,
      run: (input) => decodeAll(input, 'application/json'),
    },
    {
      name: 'events-ndjson',
      corpus: [Buffer.from(events.map((e) => JSON.stringify(e)).join('\n')), Buffer.from(events.slice(0, 4).map((e) => JSON.stringify(e)).join('\r\n') + '\n')],
      json: false,
      run: (input) => decodeAll(input, 'application/x-ndjson'),
    },
    externalBreaksTarget(),
    eventsStoreTarget(events),
  ];
}


