// Grafana's query bodies are small: a server reads at most --query-body-limit
// (64 KiB by default) of one, answers 413 past it, and so many oversized
// queries at once cannot make it hold their bodies in memory.
import { describe, expect, it } from 'vitest';
import { rawRequest } from '../e2e/process.js';
import { request, startServer } from '../e2e/server.js';
import { peakRssMiB } from './memory.js';
import { postChunks } from './wire.js';

const KIB = 1024;
const MIB = 1024 * KIB;

/** A simPod query whose payload is padded to about `bytes`. */
function query(bytes: number): Buffer {
  return Buffer.from(JSON.stringify({ targets: [{ refId: 'A', target: 'breaks-over-time', payload: { pad: 'x'.repeat(bytes) } }] }));
}

/** `body` in 64 KiB chunks, sent chunked (no Content-Length). */
function chunks(body: Buffer): Buffer[] {
  const out: Buffer[] = [];
  for (let at = 0; at < body.length; at += 64 * KIB) out.push(body.subarray(at, at + 64 * KIB));
  return out;
}

describe('Grafana query bodies', () => {
  it('are refused past --query-body-limit with 413, with and without Content-Length', async () => {
    const server = await startServer({ args: ['--query-body-limit', '8KiB'] });
    const fits = await request(server.url, '/grafana/json/query', { method: 'POST', headers: { 'content-type': 'application/json' }, body: query(4 * KIB) });
    expect(fits.status).toBe(200);
    for (const body of [query(9 * KIB), chunks(query(9 * KIB))]) {
      const reply = await rawRequest(server.url, '/grafana/json/query', { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      expect(reply.status).toBe(413);
      expect(reply.body).toMatchObject({
        error: { code: 'payload_too_large', message: `request body exceeds the limit of ${8 * KIB} bytes`, hint: 'send a smaller query, or raise --query-body-limit on the server' },
      });
    }
    expect((await request(server.url, '/healthz')).status).toBe(200);
  });

  it('by default, 24 queries of 8 MiB at once leave the server small and answering', async () => {
    const server = await startServer();
    const refused = await rawRequest(server.url, '/grafana/json/query', { method: 'POST', headers: { 'content-type': 'application/json' }, body: query(64 * KIB) });
    expect(refused.body).toMatchObject({ error: { message: `request body exceeds the limit of ${64 * KIB} bytes` } });
    const before = peakRssMiB(server.pid);
    const body = chunks(query(8 * MIB));
    const statuses = await Promise.all(Array.from({ length: 24 }, () => postChunks(server.url, '/grafana/json/query', body, { 'content-type': 'application/json' })));
    // Each is refused: 413, or, when the server closes the connection after its 413 before the client has read it, a cut.
    expect(statuses.filter((status) => status !== 413 && status !== 'EPIPE' && status !== 'ECONNRESET')).toEqual([]);
    expect(statuses).toContain(413);
    expect((await request(server.url, '/healthz')).status).toBe(200);
    // Reading them whole took the peak from ~100 MiB to over 500 MiB.
    expect(peakRssMiB(server.pid) - before).toBeLessThan(100);
  });
});
