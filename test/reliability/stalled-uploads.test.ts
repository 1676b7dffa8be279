// One client's stalled uploads neither starve other clients nor hold the
// in-flight budget for long: a client holds at most half of --inflight-limit
// (past it: 429), and a body that stops arriving is answered 408 after
// --body-timeout (gRPC: DEADLINE_EXCEEDED), giving back what it held.
import { connect } from 'node:http2';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli } from '../cli/run.js';
import { seedSession } from '../e2e/events.js';
import { postEvents, startServer } from '../e2e/server.js';
import { tempDir } from '../helpers.js';
import { stalledUpload } from './wire.js';

const MIB = 1024 * 1024;
const ARGS = ['--body-limit', '1MiB', '--inflight-limit', '4MiB', '--body-timeout', '3s'];

async function keyFor(db: string, project: string): Promise<string> {
  const created = await cli(['keys', 'create', '--db', db, '--project', project, '--scope', 'ingest,read']);
  expect(created.code).toBe(0);
  return created.stdout.trim();
}

async function lockedServer() {
  const db = join(tempDir(), 's.db');
  const keys = { a: await keyFor(db, 'alpha'), b: await keyFor(db, 'beta') };
  return { server: await startServer({ db, args: ARGS }), keys };
}

const settle = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('stalled uploads', () => {
  it("one client's four stalled 1 MiB uploads leave room for another client, and are cut after --body-timeout", async () => {
    const { server, keys } = await lockedServer();
    const headers = { 'content-type': 'application/x-ndjson', authorization: `Bearer ${keys.a}` };
    const stalled = Array.from({ length: 4 }, () => stalledUpload(server.url, '/v1/events', Buffer.alloc(MIB, ' '), headers));
    await settle(500);

    const started = Date.now();
    const other = await postEvents(server.url, seedSession(), { authorization: `Bearer ${keys.b}` });
    expect(other.status).toBe(200);
    // Well before the stalled ones are cut: it did not wait for them.
    expect(Date.now() - started).toBeLessThan(2_000);

    const replies = await Promise.all(stalled.map((upload) => upload.reply));
    // Two fit in the client's share (2 MiB) and stall until the timeout; the other two are refused at once.
    const statuses = replies.map((reply) => reply.status).sort();
    expect(statuses).toEqual([408, 408, 429, 429]);
    for (const reply of replies) {
      if (reply.status === 429) expect(reply.afterMs).toBeLessThan(2_000);
      if (reply.status === 408) expect(reply.afterMs).toBeGreaterThanOrEqual(2_500);
      if (reply.status === 408) expect(reply.afterMs).toBeLessThan(6_000);
    }
    // What they held is given back: the same client is served again.
    expect((await postEvents(server.url, seedSession('sess_again'), { authorization: `Bearer ${keys.a}` })).status).toBe(200);
  });

  it('a stalled OTLP/gRPC call is answered DEADLINE_EXCEEDED after --body-timeout, and gives back what it held', async () => {
    const { server, keys } = await lockedServer();
    const session = connect(`http://127.0.0.1:${server.grpcPort}`);
    try {
      const stream = session.request({
        ':method': 'POST',
        ':path': '/opentelemetry.proto.collector.logs.v1.LogsService/Export',
        'content-type': 'application/grpc',
        te: 'trailers',
        authorization: `Bearer ${keys.a}`,
      });
      const prefix = Buffer.alloc(5);
      prefix.writeUInt32BE(MIB - 5, 1);
      // Half a message, then nothing: it holds half a MiB of the key's share.
      stream.write(Buffer.concat([prefix, Buffer.alloc(MIB / 2)]));
      const sentAt = Date.now();
      const status = await new Promise<string | undefined>((resolve) => {
        let found: string | undefined;
        stream.on('response', (h) => void (found ??= h['grpc-status'] as string | undefined));
        stream.on('error', () => {});
        stream.on('close', () => resolve(found));
      });
      expect(status).toBe('4');
      expect(Date.now() - sentAt).toBeGreaterThanOrEqual(2_500);
      expect(Date.now() - sentAt).toBeLessThan(6_000);
    } finally {
      session.close();
    }
    // Two stalled uploads of the same key fill its 2 MiB share only if the call let go of its half MiB: neither is refused 429.
    const again = Array.from({ length: 2 }, () => stalledUpload(server.url, '/v1/events', Buffer.alloc(MIB, ' '), { 'content-type': 'application/x-ndjson', authorization: `Bearer ${keys.a}` }));
    expect((await Promise.all(again.map((upload) => upload.reply))).map((reply) => reply.status)).toEqual([408, 408]);
  });
});
