// SPEC §7: hash = xxh64 of canonical JSON (keys sorted by code point, no
// insignificant whitespace), 16 lowercase hex digits. Raw content is hashed in
// memory and never kept.
import xxhash from 'xxhash-wasm';

const { h64ToString } = await xxhash();

/** xxh64 of a string, as 16 lowercase hex digits. */
export function hashString(text: string): string {
  return h64ToString(text);
}

/**
 * Compares by Unicode code point (the same order as UTF-8 bytes), not by
 * UTF-16 code unit as `sort()` does.
 */
export function byCodePoint(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    // Only a surrogate against a char above U+DFFF orders differently.
    if (x >= 0xd800 && x <= 0xdfff && y > 0xdfff) return 1;
    if (y >= 0xd800 && y <= 0xdfff && x > 0xdfff) return -1;
    return x - y;
  }
  return a.length - b.length;
}

/**
 * Canonical JSON of `value`. Keys named in `omit` are dropped at every depth
 * (used to take `cache_control` out of content before hashing it).
 */
export function canonicalJson(value: unknown, omit?: ReadonlySet<string>): string {
  if (value === null || typeof value !== 'object') {
    return JSON.stringify(value) ?? 'null';
  }
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) {
      if (i > 0) out += ',';
      const item: unknown = value[i];
      out += item === undefined || typeof item === 'function' ? 'null' : canonicalJson(item, omit);
    }
    return out + ']';
  }
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record).sort(byCodePoint);
  let out = '{';
  let first = true;
  for (const key of keys) {
    const item = record[key];
    if (item === undefined || typeof item === 'function' || omit?.has(key)) continue;
    if (!first) out += ',';
    first = false;
    out += JSON.stringify(key) + ':' + canonicalJson(item, omit);
  }
  return out + '}';
}

const CACHE_CONTROL = new Set(['cache_control']);

/** Hash of content with every `cache_control` key removed (SPEC §7). */
export function hashContent(value: unknown): string {
  return h64ToString(canonicalJson(value, CACHE_CONTROL));
}

/** Hash of any value's canonical JSON, keys kept. */
export function hashValue(value: unknown): string {
  return h64ToString(canonicalJson(value));
}
