// cachebreak's own events (SPEC §2), one per line, as POST /v1/events takes
// them: the same conversion, so a tailed event obeys the same rules.
import { toCacheEvent } from '../../http/events.js';
import { unitText, type Decoder } from './decoder.js';
import { jsonProblem } from '../../json-problem.js';

export function ndjsonDecoder(): Decoder {
  return {
    decode(bytes, start, end, line, out) {
      const text = unitText(bytes, start, end);
      if (text.trim() === '') return;
      out.units++;
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch (error) {
        out.rejected.push({ line, error: `not valid JSON (${jsonProblem(error)})` });
        return;
      }
      const converted = toCacheEvent(value);
      if (converted.ok) out.events.push(converted.event);
      else out.rejected.push({ line, error: converted.error });
    },
    waiting: () => false,
  };
}
