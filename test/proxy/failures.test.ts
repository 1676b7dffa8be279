// Upstreams and clients that misbehave, and a store that cannot write: the
// proxy passes errors on as they are, cuts what was cut, counts each case,
// and goes on serving the next call.
import Database from 'better-sqlite3';
import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { send } from './client.js';
import { startProxyHarness } from './harness.js';
import { anthropicAnswer } from './upstreams.js';
import { pause, waitFor } from './wait.js';

const anthropicBody = (stream: boolean) => JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 50, stream, messages: [{ role: 'user', content: 'hi' }] });
const usage = { input_tokens: 10, cache_creation_input_tokens: 100, cache_read_input_tokens: 0 };

describe('proxy failures', () => {
  it('passes 4xx and 5xx answers on as they are, and stores nothing for them', async () => {
    const h = await startProxyHarness();
    const error = '{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}';
    h.anthropic.answer = () => ({ status: 429, headers: { 'content-type': 'application/json', 'retry-after': '17', 'anthropic-ratelimit-tokens-remaining': '0' }, chunks: [error] });
    const limited = await send(h.proxy, 'POST', '/anthropic/v1/messages', { 'content-type': 'application/json' }, anthropicBody(false));
    expect([limited.status, limited.headers['retry-after'], limited.headers['anthropic-ratelimit-tokens-remaining'], limited.body.toString()]).toEqual([429, '17', '0', error]);
    h.anthropic.answer = () => ({ status: 529, headers: { 'content-type': 'application/json' }, chunks: ['{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'] });
    const overloaded = await send(h.proxy, 'POST', '/anthropic/v1/messages', { 'content-type': 'application/json' }, anthropicBody(true));
    expect(overloaded.status).toBe(529);
    expect(overloaded.body.toString()).toContain('overloaded_error');
    expect(await h.metric('cachebreak_proxy_observations_total', { provider: 'anthropic', outcome: 'upstream_status' })).toBe(2);
    expect((await h.get<{ sessions: unknown[] }>('/v1/sessions')).sessions).toEqual([]);
  });

  it('says in the log when a call names an upstream request id that another session already has, and counts it', async () => {
    const h = await startProxyHarness();
    h.anthropic.usage = usage;
    h.anthropic.answer = (request) => anthropicAnswer(request, usage, 'req_reused');
    await send(h.proxy, 'POST', '/anthropic/v1/messages', { 'x-cachebreak-session': 'first' }, anthropicBody(false));
    await waitFor('the first call stored', () => h.metric('cachebreak_proxy_observations_total', { outcome: 'turn' }), (n) => n === 1);
    const second = await send(h.proxy, 'POST', '/anthropic/v1/messages', { 'x-cachebreak-session': 'second' }, anthropicBody(false));
    // The call itself is answered as the upstream answered it.
    expect(second.status).toBe(200);
    await waitFor('the second call refused', () => h.metric('cachebreak_proxy_observations_total', { provider: 'anthropic', outcome: 'rejected' }), (n) => n === 1);
    const lines = h.log.filter((line) => line.includes('event=proxy_call_rejected'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/level=warn/);
    expect(lines[0]).toContain('requestId=req_reused');
    expect(lines[0]).toContain('field=requestId');
    expect(lines[0]).toContain('already names a turn of session \\"first\\", not \\"second\\"');
    expect((await h.get<{ sessions: { sessionId: string }[] }>('/v1/sessions')).sessions.map((s) => s.sessionId)).toEqual(['first']);
  });

  it('answers 502 when the upstream cannot be reached, and says so once in the log', async () => {
    const h = await startProxyHarness();
    await h.gemini.close();
    const answer = await send(h.proxy, 'POST', '/gemini/v1beta/models/gemini-2.5-flash:generateContent', { 'x-goog-api-key': 'AIzaSECRET' }, '{"contents":[]}');
    expect(answer.status).toBe(502);
    expect(JSON.parse(answer.body.toString()).error.message).toMatch(/cannot reach http:\/\/127\.0\.0\.1:\d+ \(connect ECONNREFUSED/);
    await send(h.proxy, 'POST', '/gemini/v1beta/models/gemini-2.5-flash:generateContent', {}, '{"contents":[]}');
    expect(await h.metric('cachebreak_proxy_requests_total', { provider: 'gemini', outcome: 'upstream_unreachable' })).toBe(2);
    expect(h.log.filter((line) => line.includes('event=proxy_upstream_unreachable'))).toHaveLength(1);
    expect(h.log.join('\n')).not.toContain('AIzaSECRET');
  });

  it('cuts the client off when the upstream resets mid-stream, and serves the next call', async () => {
    const h = await startProxyHarness();
    h.anthropic.usage = usage;
    const answer = h.anthropic.answer;
    h.anthropic.answer = (request) => ({ ...answer(request), delayMs: 20, resetAfter: 3 });
    await expect(send(h.proxy, 'POST', '/anthropic/v1/messages', {}, anthropicBody(true))).rejects.toThrow(/aborted|socket hang up|ECONNRESET/);
    expect(await h.metric('cachebreak_proxy_requests_total', { provider: 'anthropic', outcome: 'upstream_reset' })).toBe(1);
    h.anthropic.answer = answer;
    const next = await send(h.proxy, 'POST', '/anthropic/v1/messages', { 'x-cachebreak-session': 'after' }, anthropicBody(true));
    expect(next.body.equals(h.anthropic.sent.at(-1)!)).toBe(true);
    await waitFor('the next call stored', () => h.metric('cachebreak_proxy_observations_total', { outcome: 'turn' }), (n) => n === 1);
  });

  it('streams a slow upstream as it comes while other calls go through', async () => {
    const h = await startProxyHarness();
    h.anthropic.usage = usage;
    const answer = h.anthropic.answer;
    h.anthropic.answer = (request) => ({ ...answer(request), firstDelayMs: 300, delayMs: 100 });
    const started = performance.now();
    const slow = send(h.proxy, 'POST', '/anthropic/v1/messages', {}, anthropicBody(true));
    await pause(50);
    h.openai.usage = { prompt_tokens: 10, prompt_tokens_details: { cached_tokens: 0 } };
    const fast = await send(h.proxy, 'POST', '/openai/v1/chat/completions', {}, JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }));
    expect(fast.status).toBe(200);
    expect(performance.now() - started).toBeLessThan(300);
    const slowAnswer = await slow;
    expect(performance.now() - started).toBeGreaterThanOrEqual(300 + 7 * 100);
    expect(slowAnswer.body.equals(h.anthropic.sent[0]!)).toBe(true);
  });

  it('stops the upstream call when the client disconnects, counts it, and stores nothing', async () => {
    const h = await startProxyHarness();
    h.anthropic.usage = usage;
    const answer = h.anthropic.answer;
    h.anthropic.answer = (request) => ({ ...answer(request), delayMs: 200 });
    const url = new URL(h.proxy);
    await new Promise<void>((resolve, reject) => {
      const req = request({ hostname: url.hostname, port: url.port, method: 'POST', path: '/anthropic/v1/messages' }, (res) => {
        res.once('data', () => {
          req.destroy();
          resolve();
        });
      });
      req.on('error', (error) => (error.message === 'socket hang up' || error.message === 'aborted' ? resolve() : reject(error)));
      req.end(anthropicBody(true));
    });
    await waitFor('the upstream connection closed', async () => h.anthropic.cutOff, (n) => n === 1);
    expect(await h.metric('cachebreak_proxy_requests_total', { provider: 'anthropic', outcome: 'client_closed' })).toBe(1);
    h.anthropic.answer = answer;
    expect((await send(h.proxy, 'POST', '/anthropic/v1/messages', {}, anthropicBody(false))).status).toBe(200);
    await waitFor('the next call stored', () => h.metric('cachebreak_proxy_observations_total', { outcome: 'turn' }), (n) => n === 1);
  });

  it('forwards a request body over --body-limit whole, and counts it as not observed', async () => {
    const h = await startProxyHarness();
    h.anthropic.usage = usage;
    const big = JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 50, messages: [{ role: 'user', content: 'x'.repeat(1024 * 1024 + 10) }] });
    const answer = await send(h.proxy, 'POST', '/anthropic/v1/messages', { 'content-type': 'application/json' }, big);
    expect(answer.status).toBe(200);
    expect(h.anthropic.received[0]!.body.toString() === big).toBe(true);
    await waitFor('counted', () => h.metric('cachebreak_proxy_observations_total', { outcome: 'unreadable' }), (n) => n === 1);
    expect(h.log.some((line) => line.includes('event=proxy_unreadable') && line.includes('--body-limit'))).toBe(true);
    expect((await h.get<{ sessions: unknown[] }>('/v1/sessions')).sessions).toEqual([]);
  });

  // While another connection holds the write lock, a write is tried again for
  // up to 5 s, without holding up the process, then fails. The call is
  // answered first, then stored or counted (stalled-store.test.ts: many calls,
  // both stores).
  it('answers calls while the database is locked by another writer; what it could not store is counted', async () => {
    const h = await startProxyHarness();
    h.anthropic.usage = usage;
    const other = new Database(h.db);
    other.exec('BEGIN IMMEDIATE');
    try {
      const answer = await send(h.proxy, 'POST', '/anthropic/v1/messages', { 'x-cachebreak-session': 'locked' }, anthropicBody(false));
      expect(answer.status).toBe(200);
      expect(answer.body.equals(h.anthropic.sent.at(-1)!)).toBe(true);
      await waitFor('the failed write counted', () => h.metric('cachebreak_proxy_observations_total', { outcome: 'store_failed' }), (n) => n === 1, 15_000);
    } finally {
      other.exec('ROLLBACK');
      other.close();
    }
    expect(h.log.some((line) => line.includes('event=proxy_store_failed') && line.includes('SQLITE_BUSY'))).toBe(true);
    await send(h.proxy, 'POST', '/anthropic/v1/messages', { 'x-cachebreak-session': 'unlocked' }, anthropicBody(false));
    await waitFor('the next call stored', () => h.metric('cachebreak_proxy_observations_total', { outcome: 'turn' }), (n) => n === 1);
  }, 30_000);
});
