// One entry for both OTLP encodings: the HTTP receiver picks by Content-Type,
// gRPC always sends protobuf.
import type { Decoded, Signal } from './decoded.js';
import { decodeJson } from './json.js';
import { decodeProtobuf } from './protobuf.js';

export type { Decoded, Signal } from './decoded.js';
export { DecodeError } from './wire.js';

export type Encoding = 'protobuf' | 'json';

export function decodeRequest(signal: Signal, encoding: Encoding, body: Buffer): Decoded {
  return encoding === 'protobuf' ? decodeProtobuf(signal, body) : decodeJson(signal, body);
}
