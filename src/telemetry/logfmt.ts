// logfmt lines: key=value pairs, values quoted only when they need it.

export type LogValue = string | number | boolean | null | undefined | readonly string[];

function quote(value: string): string {
  return /^[^\s"=\\]+$/.test(value) ? value : JSON.stringify(value);
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
