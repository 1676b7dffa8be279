// Roughly how many bytes a value takes in memory, to bound what waits by size
// rather than by count: a waiting half can be a few hashes or a few hundred
// thousand. Strings count two bytes a character (V8 keeps some one byte a
// character: an estimate on the safe side) plus a header; objects and arrays
// a header plus a slot per entry. Walked without recursion.

const STRING_HEADER = 24;
const OBJECT_HEADER = 32;
const SLOT = 8;

export function footprint(value: unknown): number {
  let bytes = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const item = stack.pop();
    if (typeof item === 'string') {
      bytes += STRING_HEADER + 2 * item.length;
    } else if (Array.isArray(item)) {
      bytes += OBJECT_HEADER + SLOT * item.length;
      for (const child of item) stack.push(child);
    } else if (typeof item === 'object' && item !== null) {
      for (const key in item) {
        bytes += SLOT;
        stack.push(key, (item as Record<string, unknown>)[key]);
      }
      bytes += OBJECT_HEADER;
    } else {
      bytes += SLOT;
    }
  }
  return bytes;
}
