// Qwen Code debug logs (`~/.qwen/debug/<session>.txt`): lines
// `<ISO time> [LEVEL] [TAG] [trace_id=… span_id=…] message`, tag and trace
// optional. Their messages are free text that changes between versions and
// name no response id and no token counts in a fixed form, so nothing in them
// can make a turn that agrees with the telemetry: every line is counted as
// ignored. Qwen Code's telemetry outfile carries the calls (format otel-file).
import type { Decoder } from './decoder.js';

export const QWEN_DEBUG_NOTE =
  "Qwen Code's debug log carries no request ids or token counts in a form cachebreak can rely on: its lines are counted, " +
  'nothing is stored. For turns and breaks, follow its telemetry outfile (QWEN_TELEMETRY_OUTFILE) instead.';

export function qwenDebugDecoder(): Decoder {
  return {
    decode(_bytes, start, end, _line, out) {
      if (end === start) return;
      out.units++;
      out.ignored++;
    },
    waiting: () => false,
  };
}
