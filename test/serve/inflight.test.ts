// Request bodies held at once are bounded (--inflight-limit): while two slow
// uploads hold most of the budget, a third request is refused with 503 and
// Retry-After, stores nothing, and succeeds once the others are answered.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SERVICE_DETECTION } from '../../src/prices/index.js';
import { startServer } from '../../src/server.js';
import { tempDir } from '../helpers.js';
import { toWire, turn, usage } from '../core/scenario.js';
import { testApp } from './harness.js';

const KIB = 1024;

/** NDJSON lines of `tag`'s turns, about `bytes` long. */
function ndjson(tag: string, bytes: number): string {
  let text = '';
  for (let i = 0; text.length < bytes; i++) text += JSON.stringify(toWire(turn(`${tag}-${i}`, { sessionId: tag, at: i * 1000, usage: usage(0, 9_000) }))) + '\n';
  return text;
}

/** An upload that sends `first` now and the rest when told to. */
function slowUpload(app: ReturnType<typeof testApp>['app'], text: string, first: number) {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const body = new ReadableStream<Uint8Array>({ start: (c) => void (controller = c) });
  controller.enqueue(new TextEncoder().encode(text.slice(0, first)));
  const reply = app.request('/v1/events', { method: 'POST', headers: { 'content-type': 'application/x-ndjson' }, body, duplex: 'half' } as RequestInit);
  return {
    reply,
    finish() {
      controller.enqueue(new TextEncoder().encode(text.slice(first)));
      controller.close();
    },
  };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 50));

describe('the in-flight budget', () => {
  it('refuses a request while others hold the budget, and takes it once they are answered', async () => {
    const { app, post, get } = testApp({ bodyLimit: 64 * KIB, inflightLimit: 128 * KIB });
    const a = ndjson('a', 60 * KIB);
    const b = ndjson('b', 60 * KIB);
    const uploads = [slowUpload(app, a, 55 * KIB), slowUpload(app, b, 55 * KIB)];
    await settle(); // both have been read as far as they were sent: 110 KiB held

    const c = ndjson('c', 20 * KIB);
    const refused = await post(c, { 'content-type': 'application/x-ndjson' });
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('1');
    // What the two uploads had sent, and nothing of this request: it was refused at its first chunk.
    expect(((await refused.json()) as { error: { message: string } }).error.message).toBe(
      `the server is holding ${110 * KIB} bytes of request bodies (--inflight-limit ${128 * KIB} bytes); nothing from this request was stored`,
    );
    expect((await get('/v1/sessions/c/turns')).status).toBe(404);

    for (const upload of uploads) upload.finish();
    for (const upload of uploads) expect((await upload.reply).status).toBe(200);
    const taken = await post(c, { 'content-type': 'application/x-ndjson' });
    expect(taken.status).toBe(200);
    expect(((await taken.json()) as { accepted: number }).accepted).toBe(c.trimEnd().split('\n').length);
  });

  it('must hold at least the largest request twice (as sent and inflated)', async () => {
    const options = { host: '127.0.0.1', port: 0, db: join(tempDir(), 'i.db'), detection: SERVICE_DETECTION, synchronous: 'normal', project: 'default' } as const;
    await expect(startServer({ ...options, bodyLimit: 64 * KIB, inflightLimit: 100 * KIB }, () => {})).rejects.toThrow(
      `--inflight-limit (${100 * KIB} bytes) must be at least twice --body-limit (${64 * KIB} bytes), or the largest request could never be read`,
    );
  });
});
