// Hand-built protobuf for what the JS exporters never send: int64 beyond
// 2^53, fields out of their usual order, unknown fields, wrong wire types,
// deep nesting. Each helper returns one encoded field.

function varintBytes(value: bigint): number[] {
  let v = BigInt.asUintN(64, value);
  const out: number[] = [];
  while (v > 0x7fn) {
    out.push(Number(v & 0x7fn) | 0x80);
    v >>= 7n;
  }
  out.push(Number(v));
  return out;
}

const tagBytes = (field: number, wireType: number) => varintBytes(BigInt((field << 3) | wireType));

export function varint(field: number, value: number | bigint): Buffer {
  return Buffer.from([...tagBytes(field, 0), ...varintBytes(BigInt(value))]);
}

export function fixed64(field: number, value: bigint): Buffer {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(BigInt.asUintN(64, value));
  return Buffer.concat([Buffer.from(tagBytes(field, 1)), b]);
}

export function double(field: number, value: number): Buffer {
  const b = Buffer.alloc(8);
  b.writeDoubleLE(value);
  return Buffer.concat([Buffer.from(tagBytes(field, 1)), b]);
}

export function bytes(field: number, ...parts: (Buffer | string)[]): Buffer {
  const payload = Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p) : p)));
  return Buffer.concat([Buffer.from([...tagBytes(field, 2), ...varintBytes(BigInt(payload.length))]), payload]);
}

/** A KeyValue (key = 1, value = 2) holding an encoded AnyValue. */
export const keyValue = (key: string, anyValue: Buffer) => Buffer.concat([bytes(1, key), bytes(2, anyValue)]);

/** ExportLogsServiceRequest with one resource and one scope holding the given encoded LogRecords. */
export function logsRequest(records: Buffer[], resourceAttributes: Buffer[] = []): Buffer {
  const scopeLogs = Buffer.concat([bytes(1, bytes(1, 'scope')), ...records.map((r) => bytes(2, r))]);
  const resource = bytes(1, ...resourceAttributes.map((kv) => bytes(1, kv)));
  return bytes(1, resource, bytes(2, scopeLogs));
}
