// The files `import` reads: whole NDJSON texts, split into the lines that
// carry events, each with its line number in the file.
import { readFile } from 'node:fs/promises';
import type { Io } from './command.js';

export interface NumberedLine {
  /** 1-based, counting blank lines too, as an editor shows it. */
  line: number;
  text: string;
}

/** `-` is standard input. */
export const STDIN = '-';

export function displayName(source: string): string {
  return source === STDIN ? 'stdin' : source;
}

export async function readSource(source: string, io: Io): Promise<string> {
  let text: string;
  if (source === STDIN) {
    const chunks: Buffer[] = [];
    for await (const chunk of io.stdin ?? []) chunks.push(Buffer.from(chunk));
    text = Buffer.concat(chunks).toString('utf8');
  } else {
    text = await readFile(source, 'utf8');
  }
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/**
 * The lines that carry an event. Blank lines are skipped exactly as the NDJSON
 * decoder skips them, so the n-th decoded value is the n-th line returned here.
 */
export function eventLines(text: string): NumberedLine[] {
  const out: NumberedLine[] = [];
  text.split('\n').forEach((line, i) => {
    if (line.trim() !== '') out.push({ line: i + 1, text: line });
  });
  return out;
}
