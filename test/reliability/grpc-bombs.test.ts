// OTLP/gRPC under gzip bombs: a call's key is checked before any of its
// message is read, so unauthenticated bombs cost the server nothing; an
// authenticated caller's bombs are inflated piece by piece inside the
// in-flight budget and its share of it. Each call here is 16 KB of gzip
// that inflates to 16 MB, on a connection of its own, as an attacker sends it.
import { connect, type ClientHttp2Session } from 'node:http2';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { cli } from '../cli/run.js';
import { startServer } from '../e2e/server.js';
import { tempDir } from '../helpers.js';
import { peakRssMiB } from './memory.js';

const EXPORT_LOGS = '/opentelemetry.proto.collector.logs.v1.LogsService/Export';
const CALLS = 50;

/** One length-prefixed message, compressed flag set. */
const BOMB = (() => {
  const gzip = gzipSync(Buffer.alloc(16_000_000));
  const frame = Buffer.alloc(5 + gzip.length);
  frame[0] = 1;
  frame.writeUInt32BE(gzip.length, 1);
  gzip.copy(frame, 5);
  return frame;
})();

/** The grpc-status the server answers a call with (headers or trailers), or why there was none. */
function call(port: number, frame: Buffer, headers: Record<string, string> = {}): Promise<string> {
  return new Promise((resolve) => {
    const session: ClientHttp2Session = connect(`http://127.0.0.1:${port}`);
    const done = (result: string) => {
      session.close();
      resolve(result);
    };
    session.on('error', (error) => done(`session error ${error.message}`));
    session.setTimeout(15_000, () => done('timeout'));
    const stream = session.request({ ':method': 'POST', ':path': EXPORT_LOGS, 'content-type': 'application/grpc', 'grpc-encoding': 'gzip', te: 'trailers', ...headers });
    let status: string | undefined;
    stream.on('response', (h) => void (status ??= h['grpc-status'] as string | undefined));
    stream.on('trailers', (h) => void (status ??= h['grpc-status'] as string | undefined));
    stream.on('error', () => {});
    stream.on('close', () => done(status ?? `no status (rst ${stream.rstCode})`));
    stream.resume();
    stream.end(frame);
  });
}

async function lockedServer() {
  const db = join(tempDir(), 'g.db');
  const created = await cli(['keys', 'create', '--db', db, '--project', 'alpha', '--scope', 'ingest']);
  expect(created.code).toBe(0);
  const server = await startServer({ db });
  return { server, key: created.stdout.trim() };
}

describe('OTLP/gRPC gzip bombs', () => {
  it(`${CALLS} unauthenticated bombs at once are refused UNAUTHENTICATED without being inflated`, async () => {
    const { server } = await lockedServer();
    const before = peakRssMiB(server.pid);
    const statuses = await Promise.all(Array.from({ length: CALLS }, () => call(server.grpcPort!, BOMB)));
    expect(statuses).toEqual(Array(CALLS).fill('16'));
    // Inflating them before the key was checked took the peak from ~120 MiB past 1 GiB.
    expect(peakRssMiB(server.pid) - before).toBeLessThan(100);
  });

  it(`${CALLS} bombs with a valid key stay inside the in-flight budget`, async () => {
    const { server, key } = await lockedServer();
    const before = peakRssMiB(server.pid);
    const statuses = await Promise.all(Array.from({ length: CALLS }, () => call(server.grpcPort!, BOMB, { authorization: `Bearer ${key}` })));
    // INVALID_ARGUMENT (zeros are not OTLP) for those read whole, RESOURCE_EXHAUSTED past the key's share of the budget.
    expect(statuses.filter((status) => status !== '3' && status !== '8')).toEqual([]);
    expect(statuses).toContain('8');
    // One key holds at most half of the default 64 MiB budget (what was inflated and dropped waits for the collector).
    expect(peakRssMiB(server.pid) - before).toBeLessThan(250);
  });
});
