// SPEC §2: the same events as {"events": […]}, as a bare array and as NDJSON,
// each also gzipped, store the same turns and the same break records.
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { breaksOf, everything, turnsOf } from './api.js';
import { openaiBreak, realisticBatch, REALISTIC_TURNS, seedBreak } from './events.js';
import { request, startServer } from './server.js';

const events = realisticBatch();

interface Format {
  name: string;
  contentType: string;
  body: () => string;
}

const FORMATS: Format[] = [
  { name: 'JSON {"events": […]}', contentType: 'application/json', body: () => JSON.stringify({ events }) },
  { name: 'JSON bare array', contentType: 'application/json; charset=utf-8', body: () => JSON.stringify(events) },
  {
    name: 'NDJSON',
    contentType: 'application/x-ndjson',
    // A blank line and CRLF endings, as files concatenated on other systems have.
    body: () => events.map((e) => JSON.stringify(e)).join('\r\n') + '\n\n',
  },
];

const VARIANTS = FORMATS.flatMap((f) => [
  { ...f, gzip: false },
  { ...f, name: `${f.name}, gzip`, gzip: true },
]);

async function ingestAs({ contentType, body, gzip }: (typeof VARIANTS)[number]) {
  const server = await startServer();
  const raw = Buffer.from(body());
  const reply = await request(server.url, '/v1/events', {
    method: 'POST',
    headers: { 'content-type': contentType, ...(gzip ? { 'content-encoding': 'gzip' } : {}) },
    body: gzip ? gzipSync(raw) : raw,
  });
  return { server, reply };
}

describe('ingest formats against a real server', () => {
  it('JSON object, bare array and NDJSON, plain and gzipped, store the seed turns and breaks alike', async () => {
    // One server (and database) per variant, side by side.
    const views = await Promise.all(
      VARIANTS.map(async (variant) => {
        const { server, reply } = await ingestAs(variant);
        expect(reply.status, variant.name).toBe(200);
        expect(reply.body, variant.name).toEqual({ accepted: events.length, duplicates: 0, rejected: [] });
        for (const [sessionId, rows] of Object.entries(REALISTIC_TURNS)) {
          const turns = await turnsOf(server.url, sessionId);
          const compact = turns.map((t) => [t.requestId, t.state, t.usage?.uncached, t.usage?.read, t.usage?.write]);
          expect(compact, `${variant.name}: ${sessionId}`).toEqual(rows);
        }
        // Newest first.
        expect(await breaksOf(server.url), variant.name).toEqual([openaiBreak(), seedBreak()]);
        return { name: variant.name, view: await everything(server.url, Object.keys(REALISTIC_TURNS)) };
      }),
    );
    // Read back in full (turns, breaks, sessions, stats): nothing
    // format-specific may leak into what is stored.
    const [first, ...rest] = views;
    for (const { name, view } of rest) expect(view, `${name} vs ${first!.name}`).toEqual(first!.view);
  });
});
