// Claude Code request bodies (OTEL_LOG_RAW_API_BODIES=1) wait in memory for
// the response body that names their request id. A real server on a small
// heap is sent large bodies whose responses never come: what waits is their
// hashes, bounded in bytes per project, the oldest dropped and counted; and a
// body still joins its response and usage.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { turnsOf } from './api.js';
import { request, startServer, type ServerProcess } from './server.js';

type Value = string | number;

/** One Claude Code log record as OTLP/JSON sends it. */
function claudeLog(event: string, attributes: Record<string, Value>, timeMs: number): unknown {
  const attribute = (key: string, value: Value) => ({ key, value: typeof value === 'number' ? { intValue: value } : { stringValue: value } });
  return {
    resourceLogs: [
      {
        resource: { attributes: [attribute('service.name', 'claude-code')] },
        scopeLogs: [
          {
            scope: { name: 'com.anthropic.claude_code.events', version: '2.1.332' },
            logRecords: [
              {
                timeUnixNano: String(BigInt(timeMs) * 1_000_000n),
                body: { stringValue: `claude_code.${event}` },
                attributes: Object.entries({ 'event.name': event, ...attributes }).map(([key, value]) => attribute(key, value)),
              },
            ],
          },
        ],
      },
    ],
  };
}

const T0 = Date.parse('2026-11-30T10:00:00Z');
const MODEL = 'claude-sonnet-4-5-20250929';

/** A request body: `pad` characters of extended-thinking settings and `messages` user messages. */
function requestBody(session: string, bodyId: string, options: { pad: number; messages: number; seed: number }): unknown {
  const body = JSON.stringify({
    model: MODEL,
    thinking: { type: 'enabled', budget_tokens: 1024, pad: String(options.seed % 10).repeat(options.pad) },
    system: [{ type: 'text', text: 'You are a helpful assistant.' }],
    messages: Array.from({ length: options.messages }, (_, i) => ({ role: i % 2 === 0 ? 'user' : 'assistant', content: `m${i}` })),
  });
  return claudeLog('api_request_body', { 'session.id': session, request_body_id: bodyId, model: MODEL, body, body_length: body.length }, T0 + options.seed);
}

function responseBody(session: string, bodyId: string, requestId: string, seed: number): unknown {
  return claudeLog('api_response_body', { 'session.id': session, request_body_id: bodyId, request_id: requestId, body: '{}' }, T0 + seed + 1);
}

function usage(session: string, requestId: string, seed: number): unknown {
  return claudeLog(
    'api_request',
    { 'session.id': session, request_id: requestId, model: MODEL, input_tokens: 4, cache_read_tokens: 0, cache_creation_tokens: 5_000, output_tokens: 20, duration_ms: 900 },
    T0 + seed + 2,
  );
}

async function sendLog(server: ServerProcess, log: unknown): Promise<void> {
  const reply = await request(server.url, '/v1/logs', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(log) });
  // No partial success: every record was taken.
  expect({ status: reply.status, body: reply.body }).toEqual({ status: 200, body: {} });
}

/** Resident memory of the server process, now and at its peak, in MiB. */
function memoryOf(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)![1]);
  return { rss: Math.round(kib('VmRSS') / 1024), peak: Math.round(kib('VmHWM') / 1024) };
}

async function metric(server: ServerProcess, series: string): Promise<number> {
  const reply = await request(server.url, '/metrics');
  const line = reply.text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? 0 : Number(line.slice(series.length + 1));
}

const EVICTED = 'cachebreak_waiting_evicted_total{project="default",table="claude_request_bodies",reason="bytes"}';
/** Events stored from OTLP/HTTP: a body's snapshot is one once its response body names the request. */
const ACCEPTED = 'cachebreak_events_total{project="default",receiver="otlp_http",outcome="accepted"}';

/** Sends a log and says how many events it stored. */
async function stored(server: ServerProcess, log: unknown): Promise<number> {
  const before = await metric(server, ACCEPTED);
  await sendLog(server, log);
  return (await metric(server, ACCEPTED)) - before;
}

/** A small body waits; its response body makes it a snapshot; its usage makes the call a turn. */
async function expectJoin(server: ServerProcess, session: string, seed: number): Promise<void> {
  expect(await stored(server, requestBody(session, `rb-${seed}`, { pad: 10, messages: 3, seed }))).toBe(0);
  expect(await stored(server, responseBody(session, `rb-${seed}`, `req-${seed}`, seed))).toBe(1);
  expect(await stored(server, usage(session, `req-${seed}`, seed))).toBe(1);
  const turns = await turnsOf(server.url, session);
  expect(turns.map((t) => [t.requestId, t.model, t.state])).toEqual([[`req-${seed}`, MODEL, 'cold']]);
}

describe('Claude Code request bodies waiting for their response', () => {
  it('25 bodies of 3 MB whose responses never come: a 64 MB heap survives and memory stays flat', async () => {
    const server = await startServer({ args: ['--grpc-port', 'off'], nodeArgs: ['--max-old-space-size=64'] });
    await expectJoin(server, 'warm-up', 0);
    const before = memoryOf(server.pid);
    // Each body: 3 MB of thinking settings and 2,000 messages (2,000 hashes).
    for (let i = 1; i <= 25; i++) {
      await sendLog(server, requestBody('attack', `rb-attack-${i}`, { pad: 3_000_000, messages: 2_000, seed: i * 10 }));
    }
    const after = memoryOf(server.pid);
    console.log(`waiting bodies: RSS ${before.rss} MiB before, ${after.rss} MiB after 25 bodies (peak ${after.peak} MiB)`);
    // Held, the bodies' thinking alone would be 75 MB: past the heap, and in RSS.
    expect(after.rss - before.rss).toBeLessThan(64);
    // Still alive, and still joining.
    await expectJoin(server, 'after', 1_000);
    expect(server.stderrLines.filter((line) => /heap|fatal/i.test(line))).toEqual([]);
  });

  it('over --max-waiting-bytes, the oldest body goes and is counted; the body that stays joins its response and usage', async () => {
    const server = await startServer({ args: ['--grpc-port', 'off', '--max-waiting-bytes', '1MiB'] });
    // 10,000 messages: some 600 KiB of hashes each, so two do not fit in 1 MiB.
    await sendLog(server, requestBody('s', 'rb-a', { pad: 0, messages: 10_000, seed: 10 }));
    expect(await metric(server, EVICTED)).toBe(0);
    await sendLog(server, requestBody('s', 'rb-b', { pad: 0, messages: 10_000, seed: 20 }));
    expect(await metric(server, EVICTED)).toBe(1);
    // rb-a is gone: its response body finds nothing to join. rb-b waited and becomes a snapshot.
    expect(await stored(server, responseBody('s', 'rb-a', 'req-a', 10))).toBe(0);
    expect(await stored(server, responseBody('s', 'rb-b', 'req-b', 20))).toBe(1);
    expect(await metric(server, EVICTED)).toBe(1);
    // A body that fits still joins its response and usage.
    await expectJoin(server, 'small', 30);
  });
});
