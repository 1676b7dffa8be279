// OTLP/gRPC: the Export method of the logs, trace and metrics services, on
// their own port. Messages pass through undecoded (identity serializers), so
// that a message that is not OTLP is answered INVALID_ARGUMENT with a reason
// rather than a generic deserialisation failure; grpc-js decompresses gzip
// messages and enforces the size limit, after decompression too.
import { Metadata, Server, ServerCredentials, status, type handleUnaryCall, type ServerErrorResponse, type ServiceDefinition } from '@grpc/grpc-js';
import type { Authenticator } from '../../auth/authenticator.js';
import { CachebreakError } from '../../errors.js';
import type { InflightBudget } from '../inflight.js';
import type { Logger } from '../../telemetry/logfmt.js';
import { decodeRequest, DecodeError, type Signal } from './decode/index.js';
import type { OtlpReceiver } from './receive.js';
import { exportMessage, GRPC_CODE, grpcCodeOf, statusMessage } from './reply.js';

const SERVICES: Readonly<Record<Signal, string>> = {
  logs: 'opentelemetry.proto.collector.logs.v1.LogsService',
  traces: 'opentelemetry.proto.collector.trace.v1.TraceService',
  metrics: 'opentelemetry.proto.collector.metrics.v1.MetricsService',
};

/** How long a graceful stop waits for calls in flight before cutting them. */
const SHUTDOWN_TIMEOUT_MS = 5_000;

export interface GrpcDeps {
  receiver: OtlpReceiver;
  auth: Authenticator;
  log: Logger;
  /** Largest message, after decompression. */
  bodyLimit: number;
  /** Bounds the messages held at once, with HTTP ingest; absent: not bounded. */
  inflight?: InflightBudget;
}

export interface RunningGrpc {
  port: number;
  /** Stops accepting, lets calls in flight finish (bounded), then closes. */
  close(): Promise<void>;
}

const identity = (message: Buffer): Buffer => message;

function serviceOf(signal: Signal): ServiceDefinition {
  return {
    Export: {
      path: `/${SERVICES[signal]}/Export`,
      requestStream: false,
      responseStream: false,
      requestSerialize: identity,
      requestDeserialize: identity,
      responseSerialize: identity,
      responseDeserialize: identity,
    },
  };
}

function failure(code: number, message: string, retryAfter?: number): ServerErrorResponse {
  const metadata = new Metadata();
  // RetryInfo tells OTLP exporters that RESOURCE_EXHAUSTED is worth retrying, and when.
  if (retryAfter !== undefined) metadata.set('grpc-status-details-bin', statusMessage(code, message, retryAfter));
  return Object.assign(new Error(message), { code, details: message, metadata });
}

function errorOf(error: unknown, log: Logger): ServerErrorResponse {
  if (error instanceof DecodeError) return failure(GRPC_CODE.invalidArgument, `not an OTLP request in protobuf: ${error.message}`);
  if (error instanceof CachebreakError) return failure(grpcCodeOf(error.status), `${error.message} (${error.hint})`, error.retryAfter);
  log.error('unhandled_error', { transport: 'grpc', message: (error as Error).message, stack: (error as Error).stack });
  return failure(status.INTERNAL, 'internal error');
}

function exportHandler(signal: Signal, deps: GrpcDeps): handleUnaryCall<Buffer, Buffer> {
  return function otlpGrpcExport(call, callback) {
    const authorization = call.metadata.get('authorization')[0];
    const holding = deps.inflight?.open();
    deps.auth
      .authorize(typeof authorization === 'string' ? authorization : undefined, 'ingest')
      .then(({ project }) => {
        holding?.take(call.request.byteLength);
        return deps.receiver.export(project, signal, decodeRequest(signal, 'protobuf', call.request), 'otlp_grpc');
      })
      .then(
        (outcome) => callback(null, exportMessage(outcome)),
        (error: unknown) => callback(errorOf(error, deps.log)),
      )
      .finally(() => holding?.release());
  };
}

/** Binds `host:port` (0 picks a free port) and serves the three Export methods. */
export async function startGrpc(host: string, port: number, deps: GrpcDeps): Promise<RunningGrpc> {
  const server = new Server({
    'grpc.max_receive_message_length': deps.bodyLimit,
  });
  for (const signal of Object.keys(SERVICES) as Signal[]) server.addService(serviceOf(signal), { Export: exportHandler(signal, deps) });
  const address = host.includes(':') && !host.startsWith('[') ? `[${host}]:${port}` : `${host}:${port}`;
  const bound = await new Promise<number>((resolve, reject) => {
    server.bindAsync(address, ServerCredentials.createInsecure(), (error, boundPort) => (error ? reject(error) : resolve(boundPort)));
  });
  let closing: Promise<void> | undefined;
  return {
    port: bound,
    close() {
      closing ??= new Promise<void>((resolve) => {
        const timer = setTimeout(() => server.forceShutdown(), SHUTDOWN_TIMEOUT_MS);
        server.tryShutdown(() => {
          clearTimeout(timer);
          resolve();
        });
      });
      return closing;
    },
  };
}
