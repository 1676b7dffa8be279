// OTLP/HTTP: POST /v1/logs, /v1/traces and /v1/metrics, protobuf or JSON,
// optionally gzip. Answers as the OTLP/HTTP spec says: an
// Export*ServiceResponse in the request's encoding, and every failure as a
// google.rpc.Status, protobuf for protobuf requests and JSON otherwise.
import type { Context, Hono } from 'hono';
import type { AppDeps, AppEnv } from '../../app.js';
import { CachebreakError, leftBodyUnread } from '../../errors.js';
import { mediaType, readBody } from '../http/body.js';
import { decodeRequest, DecodeError, type Encoding, type Signal } from './decode/index.js';
import { OtlpReceiver } from './receive.js';
import { exportJson, exportMessage, grpcCodeOf, statusJson, statusMessage } from './reply.js';

const SIGNALS: Readonly<Record<string, Signal>> = { '/v1/logs': 'logs', '/v1/traces': 'traces', '/v1/metrics': 'metrics' };

const PROTOBUF = 'application/x-protobuf';
const JSON_TYPE = 'application/json';

/** The request's OTLP encoding; undefined for any other media type. */
function encodingOf(request: Request): Encoding | undefined {
  const type = mediaType(request);
  if (type === PROTOBUF || type === 'application/protobuf') return 'protobuf';
  if (type === JSON_TYPE) return 'json';
  return undefined;
}

export function registerOtlp(app: Hono<AppEnv>, deps: AppDeps): void {
  const receiver = deps.otlp ?? new OtlpReceiver(deps);
  for (const [path, signal] of Object.entries(SIGNALS)) {
    app.post(path, async function otlpExport(c) {
      const encoding = encodingOf(c.req.raw);
      if (encoding === undefined) {
        throw new CachebreakError(
          'unsupported_media_type',
          `Content-Type "${mediaType(c.req.raw).slice(0, 80) || '(none)'}" is not accepted`,
          `send OTLP as ${PROTOBUF} or ${JSON_TYPE}`,
        );
      }
      const body = await readBody(c.req.raw, c.var.body);
      let decoded;
      try {
        decoded = decodeRequest(signal, encoding, body);
      } catch (error) {
        if (!(error instanceof DecodeError)) throw error;
        throw new CachebreakError(
          'invalid_body',
          `not an OTLP ${signal} request in ${encoding === 'protobuf' ? 'protobuf' : 'JSON'}: ${error.message}`,
          'send what an OpenTelemetry exporter or Collector sends, with a Content-Type that matches the body',
        );
      }
      const outcome = await receiver.export(c.var.project, signal, decoded, 'otlp_http');
      if (encoding === 'json') return c.body(exportJson(signal, outcome), 200, { 'content-type': JSON_TYPE });
      return c.body(new Uint8Array(exportMessage(outcome)), 200, { 'content-type': PROTOBUF });
    });
  }
}

/**
 * For app.onError: a failure on an OTLP route (from the route or from a
 * middleware before it, such as authentication) as a google.rpc.Status in the
 * request's encoding; undefined on any other route.
 */
export function otlpErrorResponse(c: Context<AppEnv>, error: Error, log: AppDeps['log']): Response | undefined {
  if (c.req.method !== 'POST' || SIGNALS[c.req.path] === undefined) return undefined;
  let failure = error;
  if (!(failure instanceof CachebreakError)) {
    log.error('unhandled_error', { requestId: c.var.requestId, path: c.req.path, message: error.message, stack: error.stack });
    failure = new CachebreakError('internal', 'internal error', `report it with the request id ${c.var.requestId}`);
  }
  const e = failure as CachebreakError;
  const message = `${e.message} (${e.hint})`;
  const code = grpcCodeOf(e.status);
  const headers: Record<string, string> = {};
  if (e.retryAfter !== undefined) headers['retry-after'] = String(e.retryAfter);
  if (leftBodyUnread(e.code)) headers.connection = 'close';
  if (encodingOf(c.req.raw) === 'protobuf') {
    headers['content-type'] = PROTOBUF;
    return new Response(new Uint8Array(statusMessage(code, message, e.retryAfter)), { status: e.status, headers });
  }
  headers['content-type'] = JSON_TYPE;
  return new Response(statusJson(code, message, e.retryAfter), { status: e.status, headers });
}
