// What a harness hands the library, read as the server reads it: request
// bodies of every provider API (the snapshot fixtures) and responses of every
// provider (the usage fixtures), as parsed bodies, stream events and raw
// event-stream text.
import { describe, expect, it } from 'vitest';
import { snapshotFromRequest, SnapshotError, usageFromResponse, UsageError } from '../../src/detector/index.js';
import { contentStrings, loadRequest, snapshotOf, REQUEST_FIXTURES } from '../core/request-fixtures.js';
import { USAGE_FIXTURES } from '../core/usage-fixtures.js';

/** Each request fixture, the provider name a harness would pass, and the API the server reads it as. */
const REQUESTS = [
  ['claude-code', 'anthropic', 'anthropic', {}],
  ['openai-chat', 'openai', 'openai-chat', {}],
  ['openai-responses', 'openai', 'openai-responses', {}],
  ['gemini', 'gemini', 'gemini', { model: 'gemini-2.5-pro' }],
  ['bedrock-converse', 'bedrock', 'bedrock', { model: 'anthropic.claude-sonnet-4-5-20250929-v1:0' }],
] as const;

describe('snapshotFromRequest', () => {
  it('covers every request fixture', () => {
    expect(REQUESTS.map(([name]) => name).sort()).toEqual([...REQUEST_FIXTURES].sort());
  });

  it.each(REQUESTS)('%s, sent to %s, gives the snapshot the server builds, without its content', (name, provider, api, options) => {
    const body = loadRequest(name);
    const snapshot = snapshotFromRequest(provider, body, options);
    expect(snapshot).toEqual(snapshotOf(body, api, options));
    expect(snapshot.tools?.length).toBeGreaterThan(0);
    const kept = JSON.stringify(snapshot);
    for (const text of contentStrings(body).filter((s) => s.length > 12)) expect(kept).not.toContain(text);
  });

  it('reads an OpenAI-compatible gateway by the body shape', () => {
    expect(snapshotFromRequest('openrouter', loadRequest('openai-chat'))).toEqual(snapshotOf(loadRequest('openai-chat'), 'openai-chat'));
  });

  it('names the field it cannot read', () => {
    const bad = () => snapshotFromRequest('anthropic', { model: 'claude-sonnet-4-5', messages: [], tools: [{ description: 'no name' }] });
    expect(bad).toThrow(SnapshotError);
    expect(bad).toThrow(/^tools\[0\]/);
    expect(() => snapshotFromRequest('some-gateway', 'not a body')).toThrow(/body: cannot tell which API/);
    expect(() => snapshotFromRequest('gemini', loadRequest('gemini'))).toThrow(/model: missing; when the URL names the model, pass it as options.model/);
  });
});

/** Stream events as the provider sends them on the wire. */
const eventStream = (events: unknown[], separator: string) => events.map((event) => `event: x\ndata: ${JSON.stringify(event)}`).join(separator) + separator;

describe('usageFromResponse', () => {
  it.each(USAGE_FIXTURES)('%s', (_file, fixture) => {
    expect(usageFromResponse(fixture.provider, fixture.raw)).toEqual(fixture.expected);
    // The body's text reads the same as the parsed body.
    const text = Array.isArray(fixture.raw) ? eventStream(fixture.raw, '\n\n') : JSON.stringify(fixture.raw);
    expect(usageFromResponse(fixture.provider, text)).toEqual(fixture.expected);
  });

  it('reads a stream cut into lines of any ending', () => {
    const streams = USAGE_FIXTURES.filter(([, f]) => Array.isArray(f.raw));
    expect(streams.length).toBeGreaterThanOrEqual(4);
    for (const [file, fixture] of streams) {
      expect(usageFromResponse(fixture.provider, eventStream(fixture.raw as unknown[], '\r\n\r\n')), file).toEqual(fixture.expected);
    }
  });

  it('names the field it cannot read', () => {
    expect(() => usageFromResponse('openai', { usage: { prompt_tokens: -1 } })).toThrow(UsageError);
    expect(() => usageFromResponse('openai', { usage: { prompt_tokens: -1 } })).toThrow(/^response\.usage\.prompt_tokens: expected a non-negative integer/);
    expect(() => usageFromResponse('anthropic', 'data: {"type":"ping"}\n\n')).toThrow(/response: the event stream carries no usage/);
    expect(() => usageFromResponse('anthropic', '{not json')).toThrow(/response: the body is not JSON/);
  });
});
