// OTLP/gRPC: the Export method of the logs, trace and metrics services, on
// their own port, served over node:http2. Unary calls are simple enough to
// serve here, and serving them here orders the work safely: nothing of a
// message is read before the call's API key is checked (until then HTTP/2
// flow control leaves at most one window, 64 KiB, waiting per connection),
// every byte read counts against the in-flight budget as it arrives, and a
// compressed message is inflated piece by piece under --body-limit. A message
// that is not OTLP is answered INVALID_ARGUMENT with a reason.
import { constants, createServer, type IncomingHttpHeaders, type OutgoingHttpHeaders, type ServerHttp2Session, type ServerHttp2Stream } from 'node:http2';
import type { Authenticator } from '../../auth/authenticator.js';
import { CachebreakError } from '../../errors.js';
import { inflate, stalled, tooLarge, type BodyBudget } from '../http/body.js';
import { clientOf, type Holding, type InflightBudget } from '../inflight.js';
import { GRPC_IDLE_TIMEOUT_MS } from '../../serve/connections.js';
import type { Logger } from '../../telemetry/logfmt.js';
import { decodeRequest, DecodeError, type Signal } from './decode/index.js';
import type { OtlpReceiver } from './receive.js';
import { exportMessage, GRPC_CODE, grpcCodeOf, statusMessage } from './reply.js';

const SERVICES: Readonly<Record<Signal, string>> = {
  logs: 'opentelemetry.proto.collector.logs.v1.LogsService',
  traces: 'opentelemetry.proto.collector.trace.v1.TraceService',
  metrics: 'opentelemetry.proto.collector.metrics.v1.MetricsService',
};

const SIGNAL_OF_PATH = new Map(Object.entries(SERVICES).map(([signal, service]) => [`/${service}/Export`, signal as Signal]));

/** How long a graceful stop waits for calls in flight before cutting them. */
const SHUTDOWN_TIMEOUT_MS = 5_000;

/** Calls one connection may have open at once. */
const MAX_STREAMS_PER_CONNECTION = 16;

/** The gRPC length-prefixed message header: a compressed flag and a 4-byte length. */
const PREFIX = 5;

export interface GrpcDeps {
  receiver: OtlpReceiver;
  auth: Authenticator;
  log: Logger;
  /** Largest message, before and after decompression. */
  bodyLimit: number;
  /** Bounds the messages held at once, with HTTP ingest; absent: not bounded. */
  inflight?: InflightBudget;
  /** How long a call may go without a byte of its message arriving (--body-timeout). */
  bodyTimeoutMs: number;
  /** Connections kept open at once (--max-connections). */
  maxConnections: number;
}

export interface RunningGrpc {
  port: number;
  /** Stops accepting, lets calls in flight finish (bounded), then closes. */
  close(): Promise<void>;
}

interface Failure {
  code: number;
  message: string;
  retryAfter?: number | undefined;
}

/** A failure that only gRPC has (framing), with its code. */
class GrpcError extends Error {
  constructor(readonly failure: Failure) {
    super(failure.message);
  }
}

const invalid = (message: string): Failure => ({ code: GRPC_CODE.invalidArgument, message });

function failureOf(error: unknown, log: Logger): Failure {
  if (error instanceof DecodeError) return invalid(`not an OTLP request in protobuf: ${error.message}`);
  if (error instanceof CachebreakError) return { code: grpcCodeOf(error.status), message: `${error.message} (${error.hint})`, retryAfter: error.retryAfter };
  if (error instanceof GrpcError) return error.failure;
  log.error('unhandled_error', { transport: 'grpc', message: (error as Error).message, stack: (error as Error).stack });
  return { code: GRPC_CODE.internal, message: 'internal error' };
}

const RESPONSE_HEADERS: OutgoingHttpHeaders = {
  ':status': 200,
  'content-type': 'application/grpc+proto',
  'grpc-accept-encoding': 'identity,deflate,gzip',
};

/** A trailers-only answer, then RST_STREAM NO_ERROR (once it is sent): the client stops sending the rest. */
function refuse(stream: ServerHttp2Stream, { code, message, retryAfter }: Failure): void {
  if (stream.destroyed || stream.headersSent) return;
  const trailers: OutgoingHttpHeaders = { ...RESPONSE_HEADERS, 'grpc-status': String(code), 'grpc-message': encodeURI(message) };
  // RetryInfo tells OTLP exporters that RESOURCE_EXHAUSTED is worth retrying, and when.
  if (retryAfter !== undefined) trailers['grpc-status-details-bin'] = statusMessage(code, message, retryAfter).toString('base64');
  stream.respond(trailers, { endStream: true });
  stream.close(constants.NGHTTP2_NO_ERROR);
}

function answer(stream: ServerHttp2Stream, message: Buffer): void {
  if (stream.destroyed) return;
  const frame = Buffer.alloc(PREFIX + message.length);
  frame.writeUInt32BE(message.length, 1);
  message.copy(frame, PREFIX);
  stream.respond({ ...RESPONSE_HEADERS, 'grpc-encoding': 'identity' }, { waitForTrailers: true });
  stream.once('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
  stream.end(frame);
}

/** The one message of a unary call, held as it arrives, refused as soon as its prefix declares more than the limit. */
async function readMessage(stream: ServerHttp2Stream, encoding: 'identity' | 'gzip' | 'deflate', budget: BodyBudget & { idleMs: number }, log: Logger): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  let declared: number | undefined;
  // A stalled call is answered, and closed: its iteration below then ends, and it gives back what it held.
  stream.setTimeout(budget.idleMs, () => refuse(stream, failureOf(stalled(budget.idleMs, size), log)));
  try {
    // Not destroyed on a refusal: it is answered, then closed.
    for await (const chunk of stream.iterator({ destroyOnReturn: false }) as AsyncIterable<Buffer>) {
      size += chunk.length;
      chunks.push(chunk);
      if (declared === undefined && size >= PREFIX) {
        declared = Buffer.concat(chunks, size).readUInt32BE(1);
        if (declared > budget.limit) throw tooLarge(budget, `a message of ${declared} bytes`);
      }
      if (declared !== undefined && size > PREFIX + declared) throw new GrpcError(invalid('more than one message in a unary call'));
      budget.holding?.take(chunk.length);
    }
  } finally {
    stream.setTimeout(0);
  }
  if (declared === undefined || size < PREFIX + declared) throw new GrpcError(invalid(size === 0 ? 'the call carried no message' : 'the call ended inside its message'));
  const framed = Buffer.concat(chunks, size);
  const message = framed.subarray(PREFIX);
  if (framed[0] === 0) return message;
  if (encoding === 'identity') throw new GrpcError(invalid('a compressed message without grpc-encoding'));
  return inflate(message, encoding, budget);
}

async function exportCall(stream: ServerHttp2Stream, headers: IncomingHttpHeaders, signal: Signal, encoding: 'identity' | 'gzip' | 'deflate', deps: GrpcDeps): Promise<void> {
  let holding: Holding | undefined;
  try {
    const { project, keyId } = await deps.auth.authorize(headers.authorization, 'ingest');
    holding = deps.inflight?.open(clientOf(keyId, stream.session?.socket?.remoteAddress));
    const message = await readMessage(stream, encoding, { limit: deps.bodyLimit, option: '--body-limit', holding, idleMs: deps.bodyTimeoutMs }, deps.log);
    const outcome = await deps.receiver.export(project, signal, decodeRequest(signal, 'protobuf', message), 'otlp_grpc');
    answer(stream, exportMessage(outcome));
  } catch (error) {
    // A client that reset its call is owed nothing.
    if (!stream.destroyed) refuse(stream, failureOf(error, deps.log));
  } finally {
    holding?.release();
  }
}

function onStream(stream: ServerHttp2Stream, headers: IncomingHttpHeaders, deps: GrpcDeps): void {
  // A reset or broken stream ends its call; there is nothing to report.
  stream.on('error', () => {});
  const path = headers[':path'] ?? '';
  const signal = SIGNAL_OF_PATH.get(path);
  if (signal === undefined || headers[':method'] !== 'POST') {
    return refuse(stream, { code: GRPC_CODE.unimplemented, message: `no method ${path.slice(0, 200)}: this port serves the OTLP Export methods of logs, traces and metrics` });
  }
  const encoding = headers['grpc-encoding'] ?? 'identity';
  if (encoding !== 'identity' && encoding !== 'gzip' && encoding !== 'deflate') {
    return refuse(stream, { code: GRPC_CODE.unimplemented, message: `messages compressed with ${encoding.slice(0, 40)} are not supported: send identity, gzip or deflate` });
  }
  void exportCall(stream, headers, signal, encoding, deps);
}

/** Binds `host:port` (0 picks a free port) and serves the three Export methods. */
export async function startGrpc(host: string, port: number, deps: GrpcDeps): Promise<RunningGrpc> {
  const server = createServer({ settings: { maxConcurrentStreams: MAX_STREAMS_PER_CONNECTION } });
  server.maxConnections = deps.maxConnections;
  // Idle connections are closed (no listener for 'timeout': Node closes them).
  server.setTimeout(GRPC_IDLE_TIMEOUT_MS);
  const sessions = new Set<ServerHttp2Session>();
  server.on('session', (session) => {
    sessions.add(session);
    session.on('error', () => {});
    session.once('close', () => sessions.delete(session));
  });
  server.on('stream', (stream, headers) => onStream(stream, headers, deps));
  const bound = await new Promise<number>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host.replace(/^\[(.*)\]$/, '$1'), () => {
      server.off('error', reject);
      resolve((server.address() as { port: number }).port);
    });
  });
  let closing: Promise<void> | undefined;
  return {
    port: bound,
    close() {
      closing ??= new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          for (const session of sessions) session.destroy();
        }, SHUTDOWN_TIMEOUT_MS);
        server.close(() => {
          clearTimeout(timer);
          resolve();
        });
        for (const session of sessions) session.close();
      });
      return closing;
    },
  };
}
