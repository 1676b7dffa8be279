// Reads a request body under a size limit, before and after gzip, for every
// HTTP receiver. Over the limit is 413, corrupt gzip 400, another encoding 415.
// Ingest routes also count what they read against the in-flight budget.
import { promisify } from 'node:util';
import { gunzip } from 'node:zlib';
import { CachebreakError } from '../../errors.js';
import type { Holding } from '../inflight.js';

const gunzipAsync = promisify(gunzip);

function tooLarge(limit: number, what: string): CachebreakError {
  return new CachebreakError(
    'payload_too_large',
    `${what} exceeds the limit of ${limit} bytes`,
    'send smaller batches, or raise --body-limit on the server',
  );
}

/** The bytes as sent (still compressed, if they were), refused past `limit`. */
export async function readRawBody(request: Request, limit: number, holding?: Holding): Promise<Buffer> {
  const declared = Number(request.headers.get('content-length') ?? NaN);
  if (declared > limit) throw tooLarge(limit, 'request body');
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (request.body) {
    for await (const chunk of request.body as unknown as AsyncIterable<Uint8Array>) {
      size += chunk.byteLength;
      if (size > limit) throw tooLarge(limit, 'request body');
      holding?.take(chunk.byteLength);
      chunks.push(chunk);
    }
  }
  return Buffer.concat(chunks, size);
}

export async function readBody(request: Request, limit: number, holding?: Holding): Promise<Buffer> {
  const raw = await readRawBody(request, limit, holding);
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
    if ((error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') throw tooLarge(limit, 'decompressed body');
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
