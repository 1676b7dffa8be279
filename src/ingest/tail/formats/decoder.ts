// What every format implements: one complete unit (a line or a JSON object)
// in, cachebreak data out. A unit that cannot be used is reported with its
// line; one that carries nothing for cachebreak is counted as ignored.
import type { CacheEvent } from '../../../core/types.js';
import { jsonProblem } from '../../json-problem.js';
import type { ExternalBreak, TokenPoint } from '../../../store/store.js';

export interface Rejected {
  line: number;
  error: string;
}

/** What a run of units produced. */
export interface Decoded {
  events: CacheEvent[];
  tokenPoints: TokenPoint[];
  externalBreaks: ExternalBreak[];
  rejected: Rejected[];
  /** Units read (lines or objects, blank lines not counted). */
  units: number;
  /** Units that carry nothing cachebreak uses (other debug lines, unused telemetry records). */
  ignored: number;
  /** What the operator should know about how the file is written (said once). */
  notices: string[];
}

export function emptyDecoded(): Decoded {
  return { events: [], tokenPoints: [], externalBreaks: [], rejected: [], units: 0, ignored: 0, notices: [] };
}

export function hasContent(d: Decoded): boolean {
  return d.events.length > 0 || d.tokenPoints.length > 0 || d.externalBreaks.length > 0;
}

export interface Decoder {
  /** Decodes bytes[start, end), which begin on file line `line`. */
  decode(bytes: Buffer, start: number, end: number, line: number, out: Decoded): void;
  /**
   * Whether a unit already decoded is waiting for its other half (a Gemini CLI
   * call's second record): a restart must read it again to complete the pair.
   */
  waiting(): boolean;
}

/** The file a decoder reads: its real path (session ids come from debug log names). */
export interface FileContext {
  path: string;
}

/** UTF-8 text of a unit, without a byte-order mark. */
export function unitText(bytes: Buffer, start: number, end: number): string {
  const text = bytes.toString('utf8', start, end);
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/** A unit's JSON value, or undefined once a unit that is not JSON has been reported with its line. */
export function jsonUnit(bytes: Buffer, start: number, end: number, line: number, out: Decoded): { value: unknown } | undefined {
  try {
    return { value: JSON.parse(unitText(bytes, start, end)) as unknown };
  } catch (error) {
    out.rejected.push({ line, error: `not valid JSON (${jsonProblem(error)})` });
    return undefined;
  }
}
