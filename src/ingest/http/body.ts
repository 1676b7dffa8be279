// Reads a request body under a size limit, before and after gzip, for every
// HTTP receiver. Over the limit is 413, corrupt gzip 400, another encoding 415.
// Ingest routes also count what they read against the in-flight budget.
import { promisify } from 'node:util';
import { gunzip } from 'node:zlib';
import { CachebreakError } from '../../errors.js';
import type { Holding } from '../inflight.js';

const gunzipAsync = promisify(gunzip);

/** How much of a body is read, and what holds it. */
export interface BodyBudget {
  /** Largest body, before and after decompression. */
  limit: number;
  /** The option that raises `limit`, named in the 413. */
  option: '--body-limit' | '--query-body-limit';
  /** Counts what is read against the in-flight budget; absent: not counted. */
  holding?: Holding | undefined;
}

function tooLarge({ limit, option }: BodyBudget, what: string): CachebreakError {
  const hint = option === '--body-limit' ? 'send smaller batches, or raise --body-limit on the server' : `send a smaller query, or raise ${option} on the server`;
  return new CachebreakError('payload_too_large', `${what} exceeds the limit of ${limit} bytes`, hint);
}

/** The bytes as sent (still compressed, if they were), refused past the limit. */
export async function readRawBody(request: Request, budget: BodyBudget): Promise<Buffer> {
  const { limit, holding } = budget;
  const declared = Number(request.headers.get('content-length') ?? NaN);
  if (declared > limit) throw tooLarge(budget, 'request body');
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (request.body) {
    for await (const chunk of request.body as unknown as AsyncIterable<Uint8Array>) {
      size += chunk.byteLength;
      if (size > limit) throw tooLarge(budget, 'request body');
      holding?.take(chunk.byteLength);
      chunks.push(chunk);
    }
  }
  return Buffer.concat(chunks, size);
}

export async function readBody(request: Request, budget: BodyBudget): Promise<Buffer> {
  const { limit, holding } = budget;
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
  let inflated: Buffer;
  try {
    inflated = await gunzipAsync(raw, { maxOutputLength: limit });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') throw tooLarge(budget, 'decompressed body');
    throw new CachebreakError(
      'invalid_body',
      `body is not valid gzip: ${(error as Error).message}`,
      'send the whole gzip stream, or drop Content-Encoding: gzip',
    );
  }
  holding?.take(inflated.byteLength);
  return inflated;
}

/** The media type of a Content-Type header, lower-cased, without parameters. */
export function mediaType(request: Request): string {
  return (request.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
}
