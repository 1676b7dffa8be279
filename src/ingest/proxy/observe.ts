// One proxied call → one event: the snapshot of its request body and the
// usage of its response, as a turn (a snapshot alone when the response
// reported no usage). Built after the response has reached the client, from
// copies: the body is hashed here and dropped, and only the event, hashes and
// counts, goes on to the pipeline.
import type { IncomingHttpHeaders } from 'node:http';
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
import { buildSnapshot } from '../../core/snapshot/index.js';
import type { CacheEvent, SnapshotContent } from '../../core/types.js';
import { toCacheEvent } from '../http/events.js';
import type { Limits } from '../limits.js';
import { agentVersionOf } from './agent-version.js';
import type { ObservedCall, ProxyProvider } from './api.js';
import type { StreamIdentity } from './identity.js';
import { responsesChain, type ResponseChain } from './openai.js';

export interface Call {
  provider: ProxyProvider;
  call: ObservedCall;
  requestHeaders: IncomingHttpHeaders;
  /** The request body as sent, possibly compressed. */
  body: Buffer;
  requestId: string;
  startMs: number;
  endMs: number;
  /** Time to the first byte of a streamed answer. */
  ttftMs: number | undefined;
  /** What the response reported, as ResponseReader found it; undefined: none. */
  usage: unknown;
}

export type Observation = { ok: true; event: CacheEvent; withUsage: boolean } | { ok: false; error: string };

function decompressed(body: Buffer, encoding: string, limit: number): Buffer {
  const options = { maxOutputLength: limit };
  if (encoding === '' || encoding === 'identity') return body;
  if (encoding === 'gzip' || encoding === 'x-gzip') return gunzipSync(body, options);
  if (encoding === 'deflate') return inflateSync(body, options);
  if (encoding === 'br') return brotliDecompressSync(body, options);
  throw new Error(`content-encoding ${encoding.slice(0, 20)} is not read`);
}

function parsedBody(call: Call, limit: number): unknown {
  const encoding = String(call.requestHeaders['content-encoding'] ?? '').trim().toLowerCase();
  let text: string;
  try {
    text = decompressed(call.body, encoding, limit).toString('utf8');
  } catch (error) {
    throw new Error(`request body: ${(error as Error).message}`);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new Error('request body: not JSON');
  }
}

/** `identify`: the stream of the request whose snapshot (and chain of stored responses) it is given (identity.ts). */
export function observe(call: Call, limits: Limits, bodyLimit: number, identify: (snapshot: SnapshotContent, chain: ResponseChain) => StreamIdentity): Observation {
  let body: unknown;
  try {
    body = parsedBody(call, bodyLimit);
  } catch (error) {
    return { ok: false, error: (error as Error).message };
  }
  const built = buildSnapshot(body, call.call.api, call.call.model === undefined ? {} : { model: call.call.model });
  if (!built.ok) return { ok: false, error: `request body: ${built.error}` };
  const agentVersion = agentVersionOf(call.requestHeaders);
  const snapshot = {
    requestId: call.requestId,
    ...identify(built.snapshot, call.call.api === 'openai-responses' ? responsesChain(body, call.usage) : {}),
    ts: call.startMs,
    provider: call.provider,
    ...(agentVersion === undefined ? {} : { agentVersion }),
    ...built.snapshot,
  };
  if (call.usage !== undefined) {
    const turn = toCacheEvent(
      { type: 'turn', ...snapshot, endTs: call.endMs, ...(call.ttftMs === undefined ? {} : { ttftMs: call.ttftMs }), usage: call.usage },
      limits,
    );
    if (turn.ok) return { ok: true, event: turn.event, withUsage: true };
    if (!turn.field.startsWith('usage')) return { ok: false, error: turn.error };
  }
  const alone = toCacheEvent({ type: 'snapshot', ...snapshot }, limits);
  return alone.ok ? { ok: true, event: alone.event, withUsage: false } : { ok: false, error: alone.error };
}
