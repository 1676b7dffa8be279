// The files `import` reads, streamed: the lines that carry events, each with
// its line number in the file, in batches, so that memory stays bounded by a
// batch however large the file or standard input is.
import { createReadStream } from 'node:fs';
import type { Io } from './command.js';

export interface NumberedLine {
  /** 1-based, counting blank lines too, as an editor shows it. */
  line: number;
  text: string;
}

export interface LineBatch {
  lines: NumberedLine[];
  /** Bytes of the source read so far (for progress). */
  bytesRead: number;
}

/** `-` is standard input. */
export const STDIN = '-';

/**
 * Characters of event text in one batch at most, whatever --batch says: a
 * batch is held as text, parsed, and (into a database) hashed at once, so
 * large events (raw system prompts, tool definitions) must make smaller
 * batches for memory to stay bounded.
 */
export const MAX_BATCH_CHARS = 2 * 1024 * 1024;

export function displayName(source: string): string {
  return source === STDIN ? 'stdin' : source;
}

function chunksOf(source: string, io: Io): AsyncIterable<Uint8Array> | Iterable<Uint8Array> {
  return source === STDIN ? (io.stdin ?? []) : createReadStream(source, { highWaterMark: 1 << 20 });
}

/**
 * Batches of at most `batchSize` lines that carry an event, and of at most
 * MAX_BATCH_CHARS characters unless one line alone is longer. Blank lines are
 * skipped exactly as the NDJSON decoder skips them, so the n-th decoded value
 * is the n-th line returned here; a leading byte-order mark is dropped.
 */
export async function* eventLines(source: string, io: Io, batchSize: number): AsyncGenerator<LineBatch> {
  const decoder = new TextDecoder('utf-8');
  let rest = '';
  let lineNumber = 0;
  let bytesRead = 0;
  let first = true;
  let batch: NumberedLine[] = [];
  let batchChars = 0;
  const take = (text: string) => {
    lineNumber += 1;
    if (text.trim() === '') return;
    batch.push({ line: lineNumber, text });
    batchChars += text.length;
  };
  for await (const chunk of chunksOf(source, io)) {
    bytesRead += chunk.byteLength;
    let text = rest + decoder.decode(chunk, { stream: true });
    if (first && text.length > 0) {
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
      first = false;
    }
    let start = 0;
    for (let end = text.indexOf('\n'); end !== -1; end = text.indexOf('\n', start)) {
      take(text.slice(start, end));
      start = end + 1;
      if (batch.length >= batchSize || batchChars >= MAX_BATCH_CHARS) {
        yield { lines: batch, bytesRead };
        batch = [];
        batchChars = 0;
      }
    }
    rest = text.slice(start);
  }
  rest += decoder.decode();
  if (first && rest.charCodeAt(0) === 0xfeff) rest = rest.slice(1);
  take(rest);
  if (batch.length > 0) yield { lines: batch, bytesRead };
}
