// A JSON object whose text was cut short (a telemetry attribute length limit)
// → its members whose values ended before the cut, and of the member the cut
// fell in, the complete leading elements when it is an array. Nothing past
// the cut is guessed: a value is kept only when its text is whole.
import type { JsonObject } from './common.js';

export interface CutObject {
  /** Members whose values ended before the cut, in the order sent. */
  members: JsonObject;
  /** The member the cut fell in; `elements` are its complete leading elements when it is an array. */
  cut?: { key: string; elements?: unknown[] };
}

/** The text ended inside the value. */
const END = -1;

function isSpace(code: number): boolean {
  return code === 0x20 || code === 0x09 || code === 0x0a || code === 0x0d;
}

function skipSpace(text: string, i: number): number {
  while (i < text.length && isSpace(text.charCodeAt(i))) i++;
  return i;
}

/** The index just past the value that starts at `i`, or END. Syntax is checked later, by JSON.parse of the value. */
function valueEnd(text: string, i: number): number {
  const first = text[i];
  if (first === '"') {
    for (let j = i + 1; j < text.length; j++) {
      if (text[j] === '\\') j++;
      else if (text[j] === '"') return j + 1;
    }
    return END;
  }
  if (first === '{' || first === '[') {
    let depth = 0;
    for (let j = i; j < text.length; j++) {
      const c = text[j];
      if (c === '"') {
        j = valueEnd(text, j) - 1;
        if (j < 0) return END;
      } else if (c === '{' || c === '[') depth++;
      else if (c === '}' || c === ']') {
        depth--;
        if (depth === 0) return j + 1;
      }
    }
    return END;
  }
  // A number or literal is whole only when something follows it.
  let j = i;
  while (j < text.length && !isSpace(text.charCodeAt(j)) && !',}]'.includes(text[j]!)) j++;
  return j === text.length ? END : j;
}

class NotJson extends Error {}

function parseWhole(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new NotJson();
  }
}

/** The complete leading elements of the array that starts at `i` and is cut. */
function cutArray(text: string, i: number): unknown[] {
  const elements: unknown[] = [];
  i = skipSpace(text, i + 1);
  while (i < text.length) {
    const end = valueEnd(text, i);
    if (end === END) break;
    elements.push(parseWhole(text.slice(i, end)));
    i = skipSpace(text, end);
    if (i >= text.length) break;
    if (text[i] !== ',') throw new NotJson();
    i = skipSpace(text, i + 1);
  }
  return elements;
}

function cutMembers(text: string): CutObject {
  const members: JsonObject = {};
  const found: CutObject = { members };
  let i = skipSpace(text, 0);
  if (text[i] !== '{') throw new NotJson();
  i = skipSpace(text, i + 1);
  while (i < text.length) {
    if (text[i] !== '"') throw new NotJson();
    const keyEnd = valueEnd(text, i);
    if (keyEnd === END) return found;
    const key = parseWhole(text.slice(i, keyEnd)) as string;
    i = skipSpace(text, keyEnd);
    if (i >= text.length) return found;
    if (text[i] !== ':') throw new NotJson();
    i = skipSpace(text, i + 1);
    const end = i < text.length ? valueEnd(text, i) : END;
    if (end === END) {
      found.cut = text[i] === '[' ? { key, elements: cutArray(text, i) } : { key };
      return found;
    }
    // Defined, not assigned: a "__proto__" member is a member like any other.
    Object.defineProperty(members, key, { value: parseWhole(text.slice(i, end)), enumerable: true, writable: true, configurable: true });
    i = skipSpace(text, end);
    if (i >= text.length) return found;
    if (text[i] !== ',') throw new NotJson();
    i = skipSpace(text, i + 1);
  }
  return found;
}

/**
 * Reads the text of a JSON object that was cut short. Returns undefined when
 * the text is not the start of a JSON object: a syntax error before its end,
 * or an object that closes (then the text was not cut, just not JSON).
 */
export function readCutObject(text: string): CutObject | undefined {
  try {
    return cutMembers(text);
  } catch (error) {
    if (error instanceof NotJson) return undefined;
    throw error;
  }
}
