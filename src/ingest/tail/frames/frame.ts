// What a framer finds in the bytes read so far: complete units (a line, or a
// top-level JSON object), never a part of one. A unit that is not complete
// yet stays unread until more bytes arrive; the framer remembers how far it
// scanned, so a large object written in small pieces is scanned once.

export const LF = 0x0a;

export interface Frame {
  /** unit: a line or object to decode; bad: bytes that cannot be one (reported); skip: bytes before the first boundary (not reported). */
  kind: 'unit' | 'bad' | 'skip';
  /** The unit's bytes: [start, end). */
  start: number;
  end: number;
  /** Where the search for the next unit begins. */
  next: number;
  /** Line breaks from the search start to `start`, and to `next`. */
  linesBefore: number;
  lines: number;
  /** For a bad frame: what is wrong with it. */
  error?: string;
}

export interface Framer {
  /**
   * The first unit at or after `from`, or undefined while it is incomplete:
   * call again with the same `from` once more bytes are appended.
   */
  next(bytes: Buffer, from: number): Frame | undefined;
  /** Forgets a partial scan (the file was truncated or replaced). */
  reset(): void;
  /**
   * Reading starts where a unit may be half done (the end of a file that is
   * being written): skip to the next boundary. `previous` is the byte before
   * the start, undefined at the start of the file.
   */
  resync(previous: number | undefined): void;
}
