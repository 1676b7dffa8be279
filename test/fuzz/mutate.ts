// Inputs for fuzzing: random bytes, and valid samples mutated at the byte
// level (flips, inserts, deletes, truncation, splices) and at the JSON level
// (values swapped for other types, huge numbers, deep nesting, long strings).
// Deterministic for a seed, so any failure can be replayed.

/** xorshift32: fast, seedable, good enough to choose mutations. */
export class Random {
  private state: number;
  constructor(seed: number) {
    this.state = seed >>> 0 || 1;
  }
  next(): number {
    let x = this.state;
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    this.state = x >>> 0;
    return this.state / 0x1_0000_0000;
  }
  int(max: number): number {
    return Math.floor(this.next() * max);
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)]!;
  }
}

const INTERESTING = [
  '', '-1', '0', '1e308', '-0', 'NaN', '9007199254740993', '1.5', 'null', 'true', '[]', '{}', '"\\u0000"',
  `"${'x'.repeat(300)}"`, `${'['.repeat(64)}${']'.repeat(64)}`, '"2026-02-31T00:00:00Z"', '"\\ud800"', '{"__proto__":{"x":1}}',
  // Times: epoch seconds, the last millisecond a JS Date holds and one past it, and a year beyond 2100.
  '1796032800', '8640000000000000', '8640000000000001', '"9999-12-31T23:59:59Z"',
  // A free-form value past --max-json.
  `{"x":"${'y'.repeat(20_000)}"}`,
];

function mutateBytes(input: Buffer, random: Random): Buffer {
  const bytes = Buffer.from(input);
  switch (random.int(6)) {
    case 0: // flip a few bits
      for (let i = 0; i < 1 + random.int(4) && bytes.length > 0; i++) bytes[random.int(bytes.length)]! ^= 1 << random.int(8);
      return bytes;
    case 1: // truncate
      return bytes.subarray(0, random.int(bytes.length + 1));
    case 2: // insert random bytes
    {
      const at = random.int(bytes.length + 1);
      const extra = Buffer.from(Array.from({ length: 1 + random.int(8) }, () => random.int(256)));
      return Buffer.concat([bytes.subarray(0, at), extra, bytes.subarray(at)]);
    }
    case 3: // delete a range
    {
      const at = random.int(bytes.length + 1);
      return Buffer.concat([bytes.subarray(0, at), bytes.subarray(at + 1 + random.int(16))]);
    }
    case 4: // duplicate a range
    {
      const at = random.int(bytes.length + 1);
      const piece = bytes.subarray(at, at + 1 + random.int(64));
      return Buffer.concat([bytes.subarray(0, at), piece, piece, bytes.subarray(at)]);
    }
    default: // overwrite with an extreme byte
      if (bytes.length > 0) bytes[random.int(bytes.length)] = random.pick([0, 0x7f, 0x80, 0xff]);
      return bytes;
  }
}

function mutateJsonValue(value: unknown, random: Random, depth = 0): unknown {
  if (depth > 4 || random.next() < 0.15) return JSON.parse(random.pick(INTERESTING.filter((t) => t !== '' && t !== '"\\ud800"' && t !== '-0')));
  if (Array.isArray(value)) {
    const copy = value.map((v) => (random.next() < 0.3 ? mutateJsonValue(v, random, depth + 1) : v));
    if (random.next() < 0.2) copy.push(mutateJsonValue(null, random, depth + 1));
    return copy;
  }
  if (value !== null && typeof value === 'object') {
    const copy: Record<string, unknown> = { ...(value as Record<string, unknown>) };
    const keys = Object.keys(copy);
    if (keys.length > 0 && random.next() < 0.5) {
      const key = random.pick(keys);
      if (random.next() < 0.2) delete copy[key];
      else copy[key] = mutateJsonValue(copy[key], random, depth + 1);
    }
    if (random.next() < 0.1) copy[`extra${random.int(3)}`] = mutateJsonValue(null, random, depth + 1);
    return copy;
  }
  return JSON.parse(random.pick(INTERESTING.filter((t) => t !== '' && t !== '"\\ud800"' && t !== '-0')));
}

/** One fuzz input from a corpus of valid samples. */
export function fuzzInput(corpus: readonly Buffer[], random: Random, json: boolean): Buffer {
  const roll = random.next();
  if (roll < 0.1 || corpus.length === 0) return Buffer.from(Array.from({ length: random.int(512) }, () => random.int(256)));
  const sample = random.pick(corpus);
  if (json && roll < 0.55) {
    try {
      return Buffer.from(JSON.stringify(mutateJsonValue(JSON.parse(sample.toString('utf8')), random)));
    } catch {
      return mutateBytes(sample, random);
    }
  }
  if (roll < 0.6) return Buffer.concat([sample.subarray(0, random.int(sample.length + 1)), random.pick(corpus).subarray(random.int(sample.length))]);
  return mutateBytes(sample, random);
}
