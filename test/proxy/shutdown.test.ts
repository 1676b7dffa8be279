// Stopping the proxy stores what it observed: the turns of calls answered
// just before SIGTERM are written, not left waiting for others to be
// written with (ingest/proxy/observations.ts lets a turn linger for a
// batch).
import { describe, expect, it } from 'vitest';
import { turnsOf } from '../e2e/api.js';
import { startServer } from '../e2e/server.js';
import { freshDb } from '../store-under-test.js';
import { MESSAGE, sinkUpstream } from './sink.js';

describe('proxy shutdown', () => {
  it('stores the turns of calls answered right before SIGTERM', async () => {
    const upstream = await sinkUpstream((res) => res.writeHead(200, { 'content-type': 'application/json' }).end(MESSAGE));
    try {
      const db = await freshDb('proxy-shutdown');
      const proxy = await startServer({ db, command: 'proxy', args: ['--anthropic-upstream', upstream.url] });
      const sessions = ['a', 'b', 'c'];
      for (const session of sessions) {
        const response = await fetch(`${proxy.proxyUrl}/anthropic/v1/messages`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-key': 'sk-ant-test', 'x-cachebreak-session': session },
          body: JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 5, messages: [{ role: 'user', content: `hello ${session}` }] }),
        });
        expect(response.status).toBe(200);
        await response.arrayBuffer();
      }
      expect((await proxy.stop('SIGTERM')).code).toBe(0);
      const reader = await startServer({ db });
      expect((await Promise.all(sessions.map((s) => turnsOf(reader.url, s)))).map((turns) => turns.length)).toEqual([1, 1, 1]);
    } finally {
      await upstream.close();
    }
  }, 60_000);
});
