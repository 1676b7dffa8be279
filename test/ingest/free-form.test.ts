// Free-form fields (raw usage, diagnostics, request parameters, raw content)
// are walked when they are hashed or stored: nesting too deep for that is one
// event's rejection, never a crash of its request. Parameters may be plain
// strings however they arrive.
import { describe, expect, it } from 'vitest';
import { buildSnapshot } from '../../src/core/snapshot/index.js';
import { toCacheEvent } from '../../src/ingest/http/events.js';
import { MAX_DEPTH, nestedDeeper } from '../../src/ingest/limits.js';
import { createMappingContext } from '../../src/ingest/otlp/sources/context.js';
import { native } from '../../src/ingest/otlp/sources/native.js';
import { T0 } from '../e2e/events.js';
import { request, startServer } from '../e2e/server.js';

function nest(depth: number): unknown {
  let value: unknown = 1;
  for (let i = 0; i < depth; i++) value = i % 2 === 0 ? [value] : { x: value };
  return value;
}

const snapshot = { type: 'snapshot', requestId: 'r1', sessionId: 's', ts: T0, model: 'claude-sonnet-4-5' };

describe('free-form fields', () => {
  it('nestedDeeper counts levels of objects and arrays without recursing', () => {
    expect(nestedDeeper(nest(MAX_DEPTH))).toBe(false);
    expect(nestedDeeper(nest(MAX_DEPTH + 1))).toBe(true);
    // Far beyond any stack: still an answer.
    expect(nestedDeeper(nest(200_000))).toBe(true);
    expect(nestedDeeper(undefined)).toBe(false);
  });

  it.each(['params', 'thinking', 'toolChoice', 'diagnostics'])('%s nested too deep is that event\'s rejection', (field) => {
    const value = field === 'params' ? { speed: nest(10_000) } : nest(10_000);
    const event = field === 'diagnostics' ? { type: 'usage', requestId: 'u1', uncachedInputTokens: 1, cacheReadInputTokens: 0, diagnostics: value } : { ...snapshot, [field]: value };
    expect(toCacheEvent(event)).toMatchObject({ ok: false, field, error: `${field}: nested more than ${MAX_DEPTH} levels deep` });
  });

  it('a raw request body nested beyond what hashing can walk is refused, not thrown', () => {
    const body = { model: 'claude-sonnet-4-5', max_tokens: 10, messages: [{ role: 'user', content: [{ type: 'text', text: 'hi', extra: nest(100_000) }] }] };
    expect(buildSnapshot(body, 'anthropic')).toEqual({ ok: false, field: 'body', error: 'body: nested too deeply to read' });
  });

  it('against a real server: the deep event is rejected, the others in its request are stored', async () => {
    const server = await startServer();
    // Written by hand: JSON.stringify itself cannot nest this deep.
    const deep = `${JSON.stringify({ ...snapshot, params: {} }).slice(0, -3)}{"x":${'['.repeat(10_000)}1${']'.repeat(10_000)}}}`;
    const good = JSON.stringify({ ...snapshot, requestId: 'r2', thinking: { type: 'enabled', budget_tokens: 8000 } });
    const reply = await request(server.url, '/v1/events', { method: 'POST', headers: { 'content-type': 'application/x-ndjson' }, body: `${deep}\n${good}\n` });
    expect(reply.status).toBe(200);
    expect(JSON.parse(reply.text)).toEqual({
      accepted: 1,
      duplicates: 0,
      rejected: [{ index: 0, field: 'params', error: `events[0].params: nested more than ${MAX_DEPTH} levels deep` }],
    });
    await server.stop();
  });

  it('a native record may give toolChoice and thinking as plain strings', () => {
    const record = {
      resource: {},
      scope: { name: '', version: '' },
      timeMs: T0,
      eventName: 'prompt_cache.snapshot',
      severityNumber: 9,
      body: null,
      attributes: { requestId: 'r1', sessionId: 's', model: 'm', toolChoice: 'auto', thinking: '{"type":"enabled","budget_tokens":8000}' },
      traceId: '',
      spanId: '',
    };
    const outcome = native.log!(record, createMappingContext());
    expect(outcome).toMatchObject({ events: [{ toolChoice: 'auto', thinking: { type: 'enabled', budget_tokens: 8000 } }] });
  });
});
