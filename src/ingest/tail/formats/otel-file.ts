// Telemetry outfiles of Qwen Code and Gemini CLI: each object is turned into
// Telemetry and mapped by the same source mappings as OTLP (one mapping, two
// transports). A file is one harness process: its joins wait in their own
// mapping context.
import { createMappingContext, mapTelemetry, type MappingContext } from '../../otlp/sources/index.js';
import { jsonUnit, type Decoder } from './decoder.js';
import { DumpError, telemetryOfDump } from './otel-sdk.js';

/** Halves waiting for their partner. */
function waitingHalves(context: MappingContext): number {
  const { claudeBodies, claudeRequestIds, requestHalves, responseHalves, spanPrefixes, spanCalls } = context;
  return claudeBodies.size + claudeRequestIds.size + requestHalves.size + responseHalves.size + spanPrefixes.size + spanCalls.size;
}

export function otelFileDecoder(now: () => number = Date.now): Decoder {
  const context = createMappingContext({ now });
  return {
    decode(bytes, start, end, line, out) {
      out.units++;
      const unit = jsonUnit(bytes, start, end, line, out);
      if (unit === undefined) return;
      const { value } = unit;
      let dump: ReturnType<typeof telemetryOfDump>;
      try {
        dump = telemetryOfDump(value);
      } catch (error) {
        if (!(error instanceof DumpError)) throw error;
        out.rejected.push({ line, error: error.message });
        return;
      }
      const mapped = mapTelemetry(dump.telemetry, context);
      context.joined(); // the tailer retries a batch until it is stored: a join here is never undone
      out.events.push(...mapped.events);
      out.tokenPoints.push(...mapped.tokenPoints);
      for (const r of mapped.rejected) out.rejected.push({ line, error: `${r.record}: ${r.error}` });
      const used = mapped.events.length + mapped.tokenPoints.length + mapped.rejected.length;
      if (used === 0) out.ignored++;
    },
    waiting: () => waitingHalves(context) > 0,
  };
}
