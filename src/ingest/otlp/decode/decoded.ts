// What decoding one OTLP request gives, whatever its encoding: the records,
// and counts of what was skipped as unusable, by reason.
import type { Telemetry } from '../records.js';

export type Signal = 'logs' | 'traces' | 'metrics';

export interface Decoded {
  telemetry: Telemetry;
  /** Records skipped while decoding (e.g. summary metrics), by reason. */
  ignored: Record<string, number>;
}

/** AnyValues nested deeper than this are refused: legitimate telemetry is shallow, and recursion must stay bounded. */
export const MAX_DEPTH = 32;

export function emptyDecoded(): Decoded {
  return { telemetry: { logs: [], spans: [], points: [] }, ignored: {} };
}

export function ignore(out: Decoded, reason: string): void {
  out.ignored[reason] = (out.ignored[reason] ?? 0) + 1;
}
