// Top-level JSON objects written one after another, pretty-printed or not
// (the OpenTelemetry file exporters of Qwen Code and Gemini CLI write
// `JSON.stringify(x, null, 2)` and a newline per object: not JSONL). A scanner
// that knows strings and escapes finds where each object ends.
//
// Pretty-printed, only a top-level object starts at the beginning of a line
// with "{" (nested lines are indented, and a raw line break cannot occur
// inside a JSON string): that is where reading resynchronises after a start
// mid-object, and where an object cut short by its writer is given up.
import { LF, type Frame, type Framer } from './frame.js';

const OPEN = 0x7b; // {
const CLOSE = 0x7d; // }
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** Space, tab, CR and the bytes of a UTF-8 byte-order mark, between objects. */
function isBlank(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0d || c === 0xef || c === 0xbb || c === 0xbf;
}

interface Scan {
  /** Bytes after `from` scanned so far. */
  pos: number;
  /** Line breaks in them. */
  lines: number;
  /** Where the current object starts (relative to `from`), -1 before its "{". */
  start: number;
  linesBefore: number;
  depth: number;
  inString: boolean;
  escaped: boolean;
}

function fresh(): Scan {
  return { pos: 0, lines: 0, start: -1, linesBefore: 0, depth: 0, inString: false, escaped: false };
}

export function objectFramer(): Framer {
  let s = fresh();
  let skipping = false;
  /** Whether the byte before the scan position is a line break (or the start of the file): only read while skipping. */
  let atLineStart = true;

  const frame = (bytes: Buffer, kind: Frame['kind'], start: number, end: number, next: number, error?: string): Frame => {
    const result: Frame = { kind, start, end, next, linesBefore: kind === 'skip' ? 0 : s.linesBefore, lines: s.lines };
    if (error !== undefined) result.error = error;
    s = fresh();
    atLineStart = next === 0 || bytes[next - 1] === LF;
    return result;
  };

  return {
    next(bytes, from) {
      let i = from + s.pos;
      while (i < bytes.length) {
        const c = bytes[i]!;
        if (s.start < 0) {
          if (c === LF) {
            s.lines++;
            atLineStart = true;
            i++;
            continue;
          }
          if (skipping) {
            if (c === OPEN && atLineStart) {
              skipping = false;
              // What was skipped is its own frame; the object is found by the next call.
              return frame(bytes, 'skip', from, i, i);
            }
            atLineStart = false;
            i++;
            continue;
          }
          if (isBlank(c)) {
            i++;
            continue;
          }
          if (c !== OPEN) {
            // Not an object: up to the end of the line is one unreadable unit.
            const end = bytes.indexOf(LF, i);
            if (end < 0) {
              s.pos = i - from;
              return undefined;
            }
            s.linesBefore = s.lines;
            s.lines++;
            return frame(bytes, 'bad', i, end, end + 1, 'not a JSON object');
          }
          s.start = i - from;
          s.linesBefore = s.lines;
          s.depth = 1;
          atLineStart = false;
          i++;
          continue;
        }
        if (c === LF) {
          // A raw line break never occurs inside a JSON string; a "{" opening the next line
          // while this object is open means the writer cut this one short.
          if (i + 1 >= bytes.length) {
            s.pos = i - from;
            return undefined;
          }
          if (bytes[i + 1] === OPEN) {
            s.lines++;
            return frame(bytes, 'bad', from + s.start, i, i + 1, 'a JSON object cut short: the next one starts before it ends');
          }
          s.lines++;
          s.inString = false;
          s.escaped = false;
          i++;
          continue;
        }
        if (s.inString) {
          if (s.escaped) s.escaped = false;
          else if (c === BACKSLASH) s.escaped = true;
          else if (c === QUOTE) s.inString = false;
        } else if (c === QUOTE) {
          s.inString = true;
        } else if (c === OPEN || c === OPEN_ARRAY) {
          s.depth++;
        } else if (c === CLOSE || c === CLOSE_ARRAY) {
          s.depth--;
          if (s.depth === 0) return frame(bytes, 'unit', from + s.start, i + 1, i + 1);
        }
        i++;
      }
      s.pos = i - from;
      return undefined;
    },
    reset() {
      s = fresh();
      skipping = false;
      atLineStart = true;
    },
    resync(previous) {
      skipping = previous !== undefined;
      atLineStart = previous === undefined || previous === LF;
    },
  };
}
