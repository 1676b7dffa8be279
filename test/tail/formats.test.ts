// Each format from its first line, and what each decoder keeps: Claude Code's
// [PROMPT CACHE BREAK] lines verbatim (and nothing else of its debug log),
// nothing from Qwen Code's debug log, cachebreak events as POST /v1/events
// reads them.
import { describe, expect, it } from 'vitest';
import { toCacheEvent } from '../../src/ingest/http/events.js';
import { wireEvent } from '../../src/ingest/http/wire.js';
import { claudeDebugDecoder, parseBreakLine, sessionOfDebugLog } from '../../src/ingest/tail/formats/claude-debug.js';
import { emptyDecoded, type Decoder } from '../../src/ingest/tail/formats/decoder.js';
import { detectFormat } from '../../src/ingest/tail/formats/index.js';
import { ndjsonDecoder } from '../../src/ingest/tail/formats/ndjson.js';
import { qwenDebugDecoder } from '../../src/ingest/tail/formats/qwen-debug.js';
import { claudeDebugLog, turns } from './workload.js';
import { T0 } from '../e2e/events.js';

function decodeLines(decoder: Decoder, text: string) {
  const out = emptyDecoded();
  text.split('\n').forEach((line, i) => {
    const bytes = Buffer.from(line);
    decoder.decode(bytes, 0, bytes.length, i + 1, out);
  });
  return out;
}

const detect = (text: string, path = '/var/log/x') => detectFormat(Buffer.from(text), path);

describe('detectFormat', () => {
  it('tells the formats apart from the first line', () => {
    expect(detect(turns('s', 1).text)).toBe('ndjson');
    expect(detect('\uFEFF' + turns('s', 1).text)).toBe('ndjson');
    expect(detect('{\n  "_spanContext": {\n')).toBe('otel-file');
    expect(detect('{"resource":{"_rawAttributes":[]},"scopeMetrics":[]}\n')).toBe('otel-file');
    expect(detect(claudeDebugLog(1).text)).toBe('claude-debug');
    expect(detect('2026-01-23T06:58:02.011Z [DEBUG] [OPENAI_PIPELINE] [trace_id=ab span_id=cd] Sending request\n')).toBe('qwen-debug');
    expect(detect('2026-01-23T06:58:02.011Z [DEBUG] Sending request\n', '/home/u/.qwen/debug/s.txt')).toBe('qwen-debug');
    expect(detect('2026-01-23T06:58:02.011Z [DEBUG] [trace_id=ab span_id=cd] x\n', '/home/u/.claude/debug/s.txt')).toBe('claude-debug');
    expect(detect('hello world\n')).toBe('unknown');
  });

  it('waits while the first line is incomplete', () => {
    expect(detect('')).toBeUndefined();
    expect(detect('{"type": "tu')).toBeUndefined();
    expect(detect('2026-01-23T06:58:02.011Z [DEB')).toBeUndefined();
  });
});

describe('Claude Code debug logs', () => {
  it('keep [PROMPT CACHE BREAK] lines as harness-reported breaks, reason verbatim, and ignore every other line', () => {
    const log = claudeDebugLog(3);
    const out = decodeLines(claudeDebugDecoder({ path: '/home/u/.claude/debug/0b7c-sess.txt' }), log.text.trimEnd());
    expect(out.rejected).toEqual([]);
    expect(out.events).toEqual([]);
    expect(out.units).toBe(15);
    expect(out.ignored).toBe(12);
    expect(out.externalBreaks).toEqual([
      {
        harness: 'claude-code',
        sessionId: '0b7c-sess',
        agentId: 'main',
        source: 'repl_main_thread',
        ts: log.breaks[0]!.ts,
        reason: 'tools changed (+1/-0 tools)',
        callNumber: 2,
        previousCacheReadTokens: 48000,
        currentCacheReadTokens: 0,
        cacheCreationTokens: 48900,
        diffPath: '/tmp/claude-1000/cache-break-0.diff',
        file: '/home/u/.claude/debug/0b7c-sess.txt',
        line: 5,
      },
      expect.objectContaining({ reason: 'system prompt changed (+42 chars)', diffPath: null, line: 10 }),
      expect.objectContaining({ reason: 'model changed (claude-sonnet-4-5 → claude-opus-4-1)', callNumber: 4, line: 15 }),
    ]);
  });

  it('names the stream as the OTLP mapping does, and reports a break line it cannot read', () => {
    expect(parseBreakLine('[PROMPT CACHE BREAK] unknown cause [source=agent:builtin:general-purpose, call #7, cache read: 9000 → 10, creation: 12]')).toMatchObject({
      agentId: 'agent:builtin:general-purpose',
      source: 'agent:builtin:general-purpose',
      reason: 'unknown cause',
    });
    expect(parseBreakLine('[PROMPT CACHE BREAK] x [source=sdk, call #1, cache read: 9000 → 10, creation: 12]')).toMatchObject({ agentId: 'main' });
    const out = decodeLines(claudeDebugDecoder({ path: '/d/s.txt' }), '2026-11-30T10:00:00.000Z [WARN] [PROMPT CACHE BREAK] cut short [source=sdk');
    expect(out.rejected).toEqual([{ line: 1, error: 'a [PROMPT CACHE BREAK] line without its [source=…, call #N, cache read: A → B, creation: C] part' }]);
    expect(sessionOfDebugLog('/home/u/.claude/debug/4f1e.txt')).toBe('4f1e');
  });
});

describe('Qwen Code debug logs', () => {
  it('are counted, never stored', () => {
    const out = decodeLines(
      qwenDebugDecoder(),
      '2026-01-23T06:58:02.011Z [DEBUG] [OPENAI_PIPELINE] [trace_id=ab span_id=cd] usage {"prompt_tokens": 12}\n2026-01-23T06:58:02.500Z [INFO] done',
    );
    expect(out).toMatchObject({ events: [], externalBreaks: [], rejected: [], units: 2, ignored: 2 });
  });
});

describe('NDJSON events', () => {
  it('are read as POST /v1/events reads them, a bad line rejected on its own', () => {
    const good = turns('s', 2).text.trimEnd().split('\n');
    const out = decodeLines(ndjsonDecoder(), [good[0], '', '{"type":"turn"}', 'nope', good[1]].join('\n'));
    expect(out.events.map((e) => e.requestId)).toEqual(['s-r0', 's-r1']);
    expect(out.rejected).toEqual([
      // Every problem of the line at once.
      { line: 3, error: 'requestId: required; sessionId: required; ts: required; model: required' },
      { line: 4, error: expect.stringMatching(/^not valid JSON/) },
    ]);
    expect(out.units).toBe(4);
  });

  it('go back to the ingest contract unchanged (what tail --server posts)', () => {
    const events = decodeLines(ndjsonDecoder(), turns('s', 5).text.trimEnd()).events;
    const usage = toCacheEvent({ type: 'usage', requestId: 'u1', provider: 'openai', ts: T0 + 5, usage: { prompt_tokens: 10, completion_tokens: 2 } });
    const snapshot = toCacheEvent({ type: 'snapshot', requestId: 'u1', sessionId: 's', ts: T0 + 1, model: 'm', system: 'hello', cacheControl: { ttl: '1h' }, expectMiss: 'compaction' });
    // Automatic caching: a read and no write field must not come back as explicit caching (a written 0).
    const automatic = toCacheEvent({ type: 'usage', requestId: 'u2', provider: 'openai', ttftMs: 850, usage: { prompt_tokens: 5000, prompt_tokens_details: { cached_tokens: 4096 } } });
    const turn = toCacheEvent({ type: 'turn', requestId: 'u3', sessionId: 's', ts: T0 + 1, endTs: T0 + 9, ttftMs: 2, provider: 'anthropic', model: 'm', usage: { input_tokens: 3, cache_read_input_tokens: 4096 } });
    // A snapshot of a body cut short keeps saying so.
    const cut = toCacheEvent({ type: 'snapshot', requestId: 'u4', sessionId: 's', ts: T0 + 1, model: 'm', tools: [{ name: 'a', schemaHash: 'h' }], partial: 'tools' });
    // A request after a stored response keeps saying so.
    const chained = toCacheEvent({ type: 'snapshot', requestId: 'u5', sessionId: 's', ts: T0 + 1, model: 'm', messageHashes: ['h1'], continuesResponse: true });
    const converted = [usage, snapshot, automatic, turn, cut, chained].map((c) => (c.ok ? c.event : undefined));
    expect(converted).not.toContain(undefined);
    for (const event of [...events, ...converted]) {
      const again = toCacheEvent(JSON.parse(JSON.stringify(wireEvent(event!))));
      expect(again).toEqual({ ok: true, event, unknownKeys: [] });
    }
  });
});
