// What an OTLP receiver answers, in the request's encoding: an
// Export*ServiceResponse (empty, or with partial_success when records were
// rejected), or a google.rpc.Status for a failure, with a RetryInfo detail
// when the client should retry later.
import type { Signal } from './decode/index.js';

export interface ExportOutcome {
  /** Records refused as invalid; the rest were accepted. */
  rejected: number;
  /** Why, when rejected > 0. */
  errorMessage: string;
}

/** gRPC status codes (google.rpc.Code) that cachebreak answers with. */
export const GRPC_CODE = {
  invalidArgument: 3,
  deadlineExceeded: 4,
  notFound: 5,
  permissionDenied: 7,
  resourceExhausted: 8,
  unimplemented: 12,
  internal: 13,
  unavailable: 14,
  unauthenticated: 16,
} as const;

/** The gRPC code of an HTTP failure status, as the OTLP/HTTP and OTLP/gRPC specs pair them. */
export function grpcCodeOf(status: number): number {
  switch (status) {
    case 400:
      return GRPC_CODE.invalidArgument;
    case 401:
      return GRPC_CODE.unauthenticated;
    case 403:
      return GRPC_CODE.permissionDenied;
    case 404:
      return GRPC_CODE.notFound;
    case 408:
      return GRPC_CODE.deadlineExceeded;
    case 413:
    case 429:
      return GRPC_CODE.resourceExhausted;
    case 415:
      return GRPC_CODE.unimplemented;
    case 503:
      return GRPC_CODE.unavailable;
    default:
      return GRPC_CODE.internal;
  }
}

/** A minimal protobuf writer: enough for the few small messages answered here. */
class Writer {
  private readonly parts: Buffer[] = [];

  varint(field: number, value: number): this {
    if (value !== 0) this.parts.push(Buffer.from([field << 3]), varint(value));
    return this;
  }

  bytes(field: number, value: Buffer): this {
    if (value.length > 0) this.parts.push(Buffer.from([(field << 3) | 2]), varint(value.length), value);
    return this;
  }

  string(field: number, value: string): this {
    return this.bytes(field, Buffer.from(value, 'utf8'));
  }

  finish(): Buffer {
    return Buffer.concat(this.parts);
  }
}

function varint(value: number): Buffer {
  const bytes: number[] = [];
  let v = value;
  while (v > 0x7f) {
    bytes.push((v % 128) | 0x80);
    v = Math.floor(v / 128);
  }
  bytes.push(v);
  return Buffer.from(bytes);
}

const REJECTED_KEY = { logs: 'rejectedLogRecords', traces: 'rejectedSpans', metrics: 'rejectedDataPoints' } as const;

const partial = (outcome: ExportOutcome) => outcome.rejected > 0 || outcome.errorMessage !== '';

/** Export{Logs,Trace,Metrics}ServiceResponse in protobuf (the same fields for every signal): partial_success = 1 {rejected = 1, error_message = 2}. */
export function exportMessage(outcome: ExportOutcome): Buffer {
  if (!partial(outcome)) return Buffer.alloc(0);
  const inner = new Writer().varint(1, outcome.rejected).string(2, outcome.errorMessage).finish();
  return new Writer().bytes(1, inner).finish();
}

/** The same in JSON; int64 as a decimal string, as the OTLP JSON encoding writes 64-bit integers. */
export function exportJson(signal: Signal, outcome: ExportOutcome): string {
  if (!partial(outcome)) return '{}';
  return JSON.stringify({ partialSuccess: { [REJECTED_KEY[signal]]: String(outcome.rejected), errorMessage: outcome.errorMessage } });
}

const RETRY_INFO = 'type.googleapis.com/google.rpc.RetryInfo';

/** google.rpc.Status {code = 1, message = 2, details = 3 (Any {type_url = 1, value = 2})} with a RetryInfo {retry_delay = 1 (Duration {seconds = 1})}. */
export function statusMessage(code: number, message: string, retryAfterSeconds?: number): Buffer {
  const status = new Writer().varint(1, code).string(2, message);
  if (retryAfterSeconds !== undefined) {
    const duration = new Writer().varint(1, retryAfterSeconds).finish();
    const retryInfo = new Writer().bytes(1, duration).finish();
    status.bytes(3, new Writer().string(1, RETRY_INFO).bytes(2, retryInfo).finish());
  }
  return status.finish();
}

export function statusJson(code: number, message: string, retryAfterSeconds?: number): string {
  const details = retryAfterSeconds === undefined ? undefined : [{ '@type': RETRY_INFO, retryDelay: `${retryAfterSeconds}s` }];
  return JSON.stringify({ code, message, ...(details ? { details } : {}) });
}
