// logfmt lines: key=value pairs, values quoted only when they need it.
// Values come from clients (session ids, model names, file paths): control
// characters, line separators and bidirectional overrides are escaped, so a
// value can neither drive the terminal that shows the log nor forge a line.

export type LogValue = string | number | boolean | null | undefined | readonly string[];

/**
 * Characters a terminal or a log viewer acts on: C0 and C1 controls, DEL,
 * line and paragraph separators, and the bidirectional formatting characters.
 */
const UNPRINTABLE = '[\\u0000-\\u001f\\u007f-\\u009f\\u061c\\u200e\\u200f\\u2028\\u2029\\u202a-\\u202e\\u2066-\\u2069]';
const HAS_UNPRINTABLE = new RegExp(UNPRINTABLE, 'u');
const EVERY_UNPRINTABLE = new RegExp(UNPRINTABLE, 'gu');

function escapeOne(char: string): string {
  return `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

/** `text` with every unprintable character written as \uXXXX: safe to show on a terminal. */
export function printable(text: string): string {
  return text.replace(EVERY_UNPRINTABLE, escapeOne);
}

function quote(value: string): string {
  if (/^[^\s"=\\]+$/.test(value) && !HAS_UNPRINTABLE.test(value)) return value;
  // JSON escapes C0 controls, quotes and backslashes; the rest is escaped the same way, so the value still parses as JSON.
  return printable(JSON.stringify(value));
}

export function logfmt(fields: Readonly<Record<string, LogValue>>): string {
  const parts: string[] = [];
  for (const [key, value] of Object.entries(fields)) {
    if (value === undefined) continue;
    const text = Array.isArray(value) ? value.join(',') : String(value);
    parts.push(`${key}=${text === '' ? '""' : quote(text)}`);
  }
  return parts.join(' ');
}

export interface Logger {
  info(event: string, fields?: Record<string, LogValue>): void;
  warn(event: string, fields?: Record<string, LogValue>): void;
  error(event: string, fields?: Record<string, LogValue>): void;
}

/** Writes one logfmt line per call; the clock is injected for tests. */
export function createLogger(write: (line: string) => void, now: () => Date = () => new Date()): Logger {
  const line = (level: string, event: string, fields: Record<string, LogValue> = {}) =>
    write(logfmt({ ts: now().toISOString(), level, event, ...fields }) + '\n');
  return {
    info: (event, fields) => line('info', event, fields),
    warn: (event, fields) => line('warn', event, fields),
    error: (event, fields) => line('error', event, fields),
  };
}
