// The native source: prompt_cache.snapshot/usage/turn log records whose
// attributes are SPEC §2 fields. Every documented encoding of the structured
// fields gives the same event as the JSON ingest API; other attributes are
// never read.
import { describe, expect, it } from 'vitest';
import { toCacheEvent } from '../../src/ingest/http/events.js';
import type { Attributes, LogRecord } from '../../src/ingest/otlp/records.js';
import { createMappingContext } from '../../src/ingest/otlp/sources/context.js';
import { native } from '../../src/ingest/otlp/sources/native.js';
import { MappingError } from '../../src/ingest/otlp/sources/source.js';
import { breaksOf } from '../e2e/api.js';
import { anthropicUsage, SEED_TOOLS, seedBreak, seedSession, T0, toolRefs } from '../e2e/events.js';
import { emitLogs, logExporter, nativeRecord, startOtlpServer, type NativeRecord } from './harness.js';

const context = createMappingContext();

function record(eventName: string, attributes: Attributes, extra: Partial<LogRecord> = {}): LogRecord {
  return { resource: {}, scope: { name: '', version: '' }, timeMs: T0, eventName, severityNumber: 9, body: null, attributes, traceId: '', spanId: '', ...extra };
}

const eventOf = (r: LogRecord) => {
  const outcome = native.log!(r, context);
  if (outcome === undefined || !('events' in outcome)) throw new Error(`not mapped: ${JSON.stringify(outcome)}`);
  return outcome.events[0];
};

const expected = (json: Record<string, unknown>) => {
  const converted = toCacheEvent(json);
  if (!converted.ok) throw new Error(converted.error);
  return converted.event;
};

const tools = toolRefs(SEED_TOOLS);
const cacheControl = { enabled: true, ttl: '5m', scope: 'tools+system+messages', markers: ['tools', 'system', 'messages:-1'] };
const usage = anthropicUsage(48_000, 900);
const base = { requestId: 'req_02', sessionId: 'sess_A', ts: '2026-11-30T10:00:05.000Z', provider: 'anthropic', model: 'claude-sonnet-4-5' };

describe('native source', () => {
  it('reads tools, cacheControl and usage as maps, as JSON strings, as flattened or parallel attributes alike', () => {
    const want = expected({ type: 'turn', ...base, tools, cacheControl, usage, messageHashes: ['m1', 'm2'] });
    const asMaps = record('prompt_cache.turn', { ...base, tools, cacheControl, usage, messageHashes: ['m1', 'm2'] });
    const asJson = record('prompt_cache.turn', { ...base, tools: JSON.stringify(tools), cacheControl: JSON.stringify(cacheControl), usage: JSON.stringify(usage), messageHashes: ['m1', 'm2'] });
    const flattened = record('prompt_cache.turn', {
      ...base,
      'tools.names': tools.map((t) => t.name),
      'tools.schemaHashes': tools.map((t) => t.schemaHash),
      ...Object.fromEntries(Object.entries(cacheControl).map(([k, v]) => [`cacheControl.${k}`, v])),
      'usage.input_tokens': usage.input_tokens,
      'usage.cache_creation_input_tokens': usage.cache_creation_input_tokens,
      'usage.cache_read_input_tokens': usage.cache_read_input_tokens,
      'usage.cache_creation.ephemeral_5m_input_tokens': usage.cache_creation.ephemeral_5m_input_tokens,
      'usage.cache_creation.ephemeral_1h_input_tokens': usage.cache_creation.ephemeral_1h_input_tokens,
      'usage.output_tokens': usage.output_tokens,
      'usage.service_tier': usage.service_tier,
      messageHashes: ['m1', 'm2'],
    });
    for (const r of [asMaps, asJson, flattened]) expect(eventOf(r)).toEqual(want);
  });

  it('takes the type from event_name, an event.name attribute or a string body; ts defaults to the record time', () => {
    const fields = { requestId: 'u1', provider: 'openai', uncachedInputTokens: 10, cacheReadInputTokens: 90 };
    const want = expected({ type: 'usage', ...fields, ts: T0 });
    expect(eventOf(record('prompt_cache.usage', fields))).toEqual(want);
    expect(eventOf(record('', { ...fields, 'event.name': 'prompt_cache.usage' }))).toEqual(want);
    expect(eventOf(record('', fields, { body: 'prompt_cache.usage' }))).toEqual(want);
    expect(native.log!(record('gen_ai.client.inference.operation.details', fields), context)).toBeUndefined();
    expect(native.log!(record('prompt_cache_break', fields), context)).toBeUndefined();
  });

  it('reads ttftMs, the time to first token, on usage and turn records', () => {
    const fields = { requestId: 'u1', provider: 'openai', uncachedInputTokens: 10, cacheReadInputTokens: 90, ttftMs: 850 };
    expect(eventOf(record('prompt_cache.usage', fields))).toEqual(expected({ type: 'usage', ...fields, ts: T0 }));
    expect(eventOf(record('prompt_cache.usage', fields))).toMatchObject({ ttftMs: 850 });
    expect(eventOf(record('prompt_cache.turn', { ...base, usage, ttftMs: 1200 }))).toMatchObject({ type: 'turn', ttftMs: 1200 });
  });

  it('hashes raw system text and tool definitions, and never carries attributes that are not fields', () => {
    const toolDefinitions = [{ name: 'read_file', description: 'Read', input_schema: { type: 'object' } }];
    const event = eventOf(
      record('prompt_cache.snapshot', { ...base, system: 'You are helpful.', toolDefinitions: JSON.stringify(toolDefinitions), 'user.email': 'a@example.com', prompt: 'secret text' }),
    );
    expect(event).toEqual(expected({ type: 'snapshot', ...base, system: 'You are helpful.', toolDefinitions }));
    expect(JSON.stringify(event)).not.toMatch(/secret text|example\.com|You are helpful/);
  });

  it('rejects a malformed record with the field and the reason', () => {
    const reject = (attributes: Attributes) => {
      try {
        native.log!(record('prompt_cache.turn', attributes), context);
      } catch (error) {
        expect(error).toBeInstanceOf(MappingError);
        return (error as Error).message;
      }
      throw new Error('not rejected');
    };
    const { model: _model, ...withoutModel } = base;
    expect(reject({ ...withoutModel, usage })).toBe('model: required');
    expect(reject({ ...base, usage, 'tools.names': ['a', 'b'], 'tools.schemaHashes': ['h'] })).toBe('tools.schemaHashes: expected a string array with one hash per name in tools.names');
    expect(reject({ ...base, usage: '{not json' })).toBe('usage: expected JSON, got a string that does not parse');
    expect(reject({ ...base, uncachedInputTokens: -1 })).toMatch(/^uncachedInputTokens: /);
  });

  it('the seed session in the other encodings, over OTLP/HTTP, gives the same break as the JSON ingest API', async () => {
    const server = await startOtlpServer();
    const records: NativeRecord[] = seedSession().map((event) => {
      const { eventName, attributes } = nativeRecord(event);
      const { tools: list, cacheControl: cc, usage: raw, ...rest } = attributes as Record<string, never>;
      const flat: Record<string, unknown> = { ...rest };
      if (list) {
        flat['tools.names'] = (list as { name: string }[]).map((t) => t.name);
        flat['tools.schemaHashes'] = (list as { schemaHash: string }[]).map((t) => t.schemaHash);
      }
      if (cc) for (const [k, v] of Object.entries(cc as object)) flat[`cacheControl.${k}`] = v;
      if (raw) flat.usage = JSON.stringify(raw);
      return { eventName, attributes: flat as NativeRecord['attributes'] };
    });
    expect(await emitLogs(logExporter(server, 'http/json'), records)).toEqual([{ code: 0 }]);
    expect(await breaksOf(server.url)).toEqual([seedBreak()]);
  });
});
