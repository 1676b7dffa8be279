// Lines: NDJSON events and debug logs. A line is complete at its "\n"; a
// trailing "\r" is not part of it.
import { LF, type Frame, type Framer } from './frame.js';

const CR = 0x0d;

export function lineFramer(): Framer {
  /** Bytes after `from` already known to hold no line break. */
  let scanned = 0;
  let skipping = false;
  return {
    next(bytes, from) {
      const at = bytes.indexOf(LF, from + scanned);
      if (at < 0) {
        scanned = bytes.length - from;
        return undefined;
      }
      scanned = 0;
      const end = at > from && bytes[at - 1] === CR ? at - 1 : at;
      const frame: Frame = { kind: skipping ? 'skip' : 'unit', start: from, end, next: at + 1, linesBefore: 0, lines: 1 };
      skipping = false;
      return frame;
    },
    reset() {
      scanned = 0;
      skipping = false;
    },
    resync(previous) {
      skipping = previous !== undefined && previous !== LF;
    },
  };
}
