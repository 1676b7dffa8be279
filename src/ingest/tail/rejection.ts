// What a rejected line is reported with: what is wrong and where, never what
// the line said. A followed file can hold prompt text or secrets (a link, a
// log that was never meant for cachebreak), and rejection lines go to the
// terminal and the server log. The decoders' messages name fields and
// positions; the few that echo a value are cut here, and what remains is
// made printable and short.
import { printable } from '../../telemetry/logfmt.js';

/** Longest rejection message kept. */
const MAX_CHARS = 300;

const QUOTED = String.raw`"(?:[^"\\]|\\.)*"`;

export function rejectionText(error: string): string {
  const text = error
    // V8's JSON.parse names the character it stopped at.
    .replace(/Unexpected token '[\s\S]{1,2}?'/u, 'Unexpected token')
    // "type: expected one of snapshot, usage, turn, got "…"".
    .replace(new RegExp(String.raw`\bgot ${QUOTED}`, 'g'), 'got another value');
  return printable(text.length > MAX_CHARS ? `${text.slice(0, MAX_CHARS)}…` : text);
}
