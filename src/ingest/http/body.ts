// Reads a request body under a size limit, before and after gzip, for every
// HTTP receiver (and inflates OTLP/gRPC messages). Over the limit is 413,
// corrupt gzip 400, another encoding 415. Ingest routes also count what they
// read, and what it inflates to, against the in-flight budget as it arrives.
import { createGunzip, createInflate } from 'node:zlib';
import { CachebreakError } from '../../errors.js';
import type { Holding } from '../inflight.js';

/** How long a body may go without a byte arriving, unless told otherwise (--body-timeout). */
export const DEFAULT_BODY_TIMEOUT_MS = 30_000;

/** How much of a body is read, and what holds it. */
export interface BodyBudget {
  /** Largest body, before and after decompression. */
  limit: number;
  /** The option that raises `limit`, named in the 413. */
  option: '--body-limit' | '--query-body-limit';
  /** Counts what is read against the in-flight budget; absent: not counted. */
  holding?: Holding | undefined;
  /** How long the body may go without a byte arriving (--body-timeout); absent: no limit here. */
  idleMs?: number | undefined;
}

export function tooLarge({ limit, option }: BodyBudget, what: string): CachebreakError {
  const hint = option === '--body-limit' ? 'send smaller batches, or raise --body-limit on the server' : `send a smaller query, or raise ${option} on the server`;
  return new CachebreakError('payload_too_large', `${what} exceeds the limit of ${limit} bytes`, hint);
}

export function stalled(idleMs: number, size: number): CachebreakError {
  return new CachebreakError(
    'request_timeout',
    `no byte of the request body arrived for ${idleMs / 1000} s (--body-timeout), after ${size} bytes; nothing from this request was stored`,
    'send the whole body without pausing, or raise --body-timeout on the server',
  );
}

/** The next chunk, or a 408 when none arrives within `idleMs`. */
function nextChunk(reader: ReadableStreamDefaultReader<Uint8Array>, idleMs: number | undefined, size: number): ReturnType<ReadableStreamDefaultReader<Uint8Array>['read']> {
  const read = reader.read();
  if (idleMs === undefined) return read;
  // Left pending when the timer wins: it settles when the connection closes after the 408.
  read.catch(() => {});
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(stalled(idleMs, size)), idleMs)));
  return Promise.race([read, timeout]).finally(() => clearTimeout(timer));
}

/** The bytes as sent (still compressed, if they were), refused past the limit or when they stall. */
export async function readRawBody(request: Request, budget: BodyBudget): Promise<Buffer> {
  const { limit, holding } = budget;
  const declared = Number(request.headers.get('content-length') ?? NaN);
  if (declared > limit) throw tooLarge(budget, 'request body');
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (request.body) {
    const reader = request.body.getReader();
    for (;;) {
      const { done, value: chunk } = await nextChunk(reader, budget.idleMs, size);
      if (done) break;
      size += chunk.byteLength;
      if (size > limit) throw tooLarge(budget, 'request body');
      holding?.take(chunk.byteLength);
      chunks.push(chunk);
    }
  }
  return Buffer.concat(chunks, size);
}

/**
 * `raw` inflated piece by piece: each piece is held as it comes out, and the
 * inflation stops as soon as it passes the limit, so a small bomb never
 * grows past what the budget allows.
 */
export async function inflate(raw: Buffer, encoding: 'gzip' | 'deflate', budget: BodyBudget): Promise<Buffer> {
  const inflater = encoding === 'gzip' ? createGunzip() : createInflate();
  const parts: Buffer[] = [];
  let size = 0;
  inflater.end(raw);
  try {
    for await (const part of inflater as AsyncIterable<Buffer>) {
      size += part.length;
      if (size > budget.limit) throw tooLarge(budget, 'decompressed body');
      budget.holding?.take(part.length);
      parts.push(part);
    }
  } catch (error) {
    inflater.destroy();
    if (error instanceof CachebreakError) throw error;
    throw new CachebreakError('invalid_body', `body is not valid ${encoding}: ${(error as Error).message}`, `send the whole ${encoding} stream, or send the body uncompressed`);
  }
  return Buffer.concat(parts, size);
}

export async function readBody(request: Request, budget: BodyBudget): Promise<Buffer> {
  const raw = await readRawBody(request, budget);
  const encoding = (request.headers.get('content-encoding') ?? 'identity').trim().toLowerCase();
  if (encoding === 'identity' || encoding === '') return raw;
  if (encoding !== 'gzip') {
    throw new CachebreakError(
      'unsupported_media_type',
      `Content-Encoding ${encoding} is not supported`,
      'send the body uncompressed or with Content-Encoding: gzip',
    );
  }
  return inflate(raw, 'gzip', budget);
}

/** The media type of a Content-Type header, lower-cased, without parameters. */
export function mediaType(request: Request): string {
  return (request.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
}
