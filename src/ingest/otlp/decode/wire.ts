// The protobuf wire format, read by hand: varints, fixed-width numbers and
// length-delimited ranges over one buffer, with no intermediate objects. The
// decoders read only the fields cachebreak needs and skip the rest in place.

export class DecodeError extends Error {}

/** 2^32, to combine the two halves of a 64-bit number. */
const HIGH = 4294967296;

/** Buffer's own UTF-8 decoder, without the encoding dispatch of toString (a third of the cost for short strings). */
type Utf8Buffer = Buffer & { utf8Slice(start: number, end: number): string };

/**
 * Short strings repeat across records (attribute keys, tool names, hashes,
 * model names): a direct-mapped cache returns the same string for the same
 * bytes, which costs a hash and a compare instead of a decode and an
 * allocation. Strings longer than INTERNED_MAX are decoded every time.
 */
const INTERNED_MAX = 48;
const SLOTS = 4096;
const internedBytes = new Uint8Array(SLOTS * INTERNED_MAX);
const internedLength = new Uint8Array(SLOTS);
const internedString: string[] = new Array<string>(SLOTS).fill('');

function interned(buf: Utf8Buffer, start: number, stop: number): string {
  const length = stop - start;
  let hash = length;
  for (let i = start; i < stop; i++) hash = Math.imul(hash ^ buf[i]!, 0x01000193);
  const slot = (hash >>> 0) & (SLOTS - 1);
  const base = slot * INTERNED_MAX;
  if (internedLength[slot] === length) {
    let i = 0;
    while (i < length && internedBytes[base + i] === buf[start + i]) i++;
    if (i === length) return internedString[slot]!;
  }
  const value = buf.utf8Slice(start, stop);
  for (let i = 0; i < length; i++) internedBytes[base + i] = buf[start + i]!;
  internedLength[slot] = length;
  internedString[slot] = value;
  return value;
}

export class Reader {
  pos = 0;

  constructor(readonly buf: Buffer) {}

  private truncated(): DecodeError {
    return new DecodeError(`truncated message at byte ${this.pos}`);
  }

  /** A varint as an unsigned 32-bit number; the upper bits of a longer varint are dropped. */
  uint32(end: number): number {
    const buf = this.buf;
    let p = this.pos;
    let byte = buf[p++]!;
    let value = byte & 0x7f;
    if (byte >= 0x80) {
      byte = buf[p++]!;
      value |= (byte & 0x7f) << 7;
      if (byte >= 0x80) {
        byte = buf[p++]!;
        value |= (byte & 0x7f) << 14;
        if (byte >= 0x80) {
          byte = buf[p++]!;
          value |= (byte & 0x7f) << 21;
          if (byte >= 0x80) {
            byte = buf[p++]!;
            value |= (byte & 0x0f) << 28;
            // Up to five more bytes of a 64-bit varint (negative enums, bools written as uint64).
            for (let i = 0; byte >= 0x80; i++) {
              if (i === 5) throw new DecodeError(`varint longer than 10 bytes at byte ${this.pos}`);
              byte = buf[p++]!;
            }
          }
        }
      }
    }
    if (p > end) throw this.truncated();
    this.pos = p;
    return value >>> 0;
  }

  /** A varint int64: a number when it is exact as one, else its decimal string. */
  int64(end: number): number | string {
    const buf = this.buf;
    let p = this.pos;
    let lo = 0;
    let hi = 0;
    let byte = 0x80;
    for (let i = 0; byte >= 0x80; i++) {
      if (i === 10) throw new DecodeError(`varint longer than 10 bytes at byte ${this.pos}`);
      byte = buf[p++]!;
      const bits = byte & 0x7f;
      if (i < 4) lo |= bits << (7 * i);
      else if (i === 4) {
        lo |= bits << 28;
        hi |= bits >>> 4;
      } else hi |= bits << (7 * i - 32);
    }
    if (p > end) throw this.truncated();
    this.pos = p;
    lo >>>= 0;
    hi >>>= 0;
    if (hi < 0x200000) return hi * HIGH + lo;
    if (hi >= 0x80000000) {
      const magnitude = (~hi >>> 0) * HIGH + (HIGH - lo);
      if (magnitude <= Number.MAX_SAFE_INTEGER) return -magnitude;
    }
    return BigInt.asIntN(64, (BigInt(hi) << 32n) | BigInt(lo)).toString();
  }

  private need(bytes: number, end: number): number {
    const at = this.pos;
    if (at + bytes > end) throw this.truncated();
    this.pos = at + bytes;
    return at;
  }

  /** A fixed64 of nanoseconds since the epoch, as whole milliseconds (exact: no float rounding). */
  fixed64Ms(end: number): number {
    const at = this.need(8, end);
    const lo = this.buf.readUInt32LE(at);
    const hi = this.buf.readUInt32LE(at + 4);
    // hi·2^32 ns = hi·4294 ms + hi·967296 ns; every term stays below 2^53.
    return hi * 4294 + Math.floor((hi * 967296 + lo) / 1e6);
  }

  /** An sfixed64, as a number (exact up to 2^53). */
  sfixed64(end: number): number {
    const at = this.need(8, end);
    return this.buf.readInt32LE(at + 4) * HIGH + this.buf.readUInt32LE(at);
  }

  double(end: number): number {
    return this.buf.readDoubleLE(this.need(8, end));
  }

  /** Reads a length prefix; returns where the delimited range ends. */
  delimited(end: number): number {
    const length = this.uint32(end);
    const stop = this.pos + length;
    if (stop > end) throw this.truncated();
    return stop;
  }

  string(end: number): string {
    const stop = this.delimited(end);
    const start = this.pos;
    this.pos = stop;
    const buf = this.buf as Utf8Buffer;
    // An empty slot has length 0, so the empty string is never looked up.
    if (stop === start) return '';
    return stop - start <= INTERNED_MAX ? interned(buf, start, stop) : buf.utf8Slice(start, stop);
  }

  bytes(end: number, encoding: 'hex' | 'base64'): string {
    const stop = this.delimited(end);
    const start = this.pos;
    this.pos = stop;
    return this.buf.toString(encoding, start, stop);
  }

  /** Skips a field of the given wire type. Groups (3, 4) are not part of OTLP and are refused. */
  skip(wireType: number, end: number): void {
    switch (wireType) {
      case 0:
        this.uint32(end);
        return;
      case 1:
        this.need(8, end);
        return;
      case 2:
        this.pos = this.delimited(end);
        return;
      case 5:
        this.need(4, end);
        return;
      default:
        throw new DecodeError(`invalid wire type ${wireType} at byte ${this.pos}`);
    }
  }

  /** The next field's tag (field number << 3 | wire type). */
  tag(end: number): number {
    const tag = this.uint32(end);
    if (tag >>> 3 === 0) throw new DecodeError(`invalid field number 0 at byte ${this.pos}`);
    return tag;
  }
}
