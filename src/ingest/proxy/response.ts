// Reads a response as it is passed on to the client: a copy of each chunk is
// decoded (and decompressed) here and the bytes themselves are never held
// back. An event stream is parsed as it passes and only the events that carry
// usage are kept; any other body is kept up to the limit and parsed at its end.
import { StringDecoder } from 'node:string_decoder';
import type { Transform } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';

/** A data payload that may carry a usage object, checked before parsing it. */
const CARRIES_USAGE = /"usage(?:Metadata)?"\s*:\s*\{/;

function inflaterFor(encoding: string): Transform | undefined {
  if (encoding === 'gzip' || encoding === 'x-gzip') return createGunzip();
  if (encoding === 'deflate') return createInflate();
  if (encoding === 'br') return createBrotliDecompress();
  return undefined;
}

export class ResponseReader {
  private readonly sse: boolean;
  private readonly decoder = new StringDecoder('utf8');
  private readonly inflater: Transform | undefined;
  private readonly inflated: Promise<void> | undefined;
  /** An event stream's unfinished line, or a whole body. */
  private pending = '';
  /** Data lines of the event being read. */
  private data: string[] = [];
  private held = 0;
  private afterCr = false;
  /** First Anthropic message_start, and the latest other event that carried usage. */
  private start: unknown;
  private last: unknown;
  /** Why nothing can be read: set once, and from then on chunks are ignored. */
  failure: string | undefined;

  constructor(
    contentType: string,
    contentEncoding: string,
    private readonly limit: number,
  ) {
    this.sse = contentType.toLowerCase().startsWith('text/event-stream');
    const encoding = contentEncoding.trim().toLowerCase();
    if (encoding !== '' && encoding !== 'identity') {
      this.inflater = inflaterFor(encoding);
      if (!this.inflater) {
        this.failure = `content-encoding ${encoding.slice(0, 20)} is not read`;
        return;
      }
      this.inflater.on('data', (chunk: Buffer) => this.read(chunk));
      this.inflated = new Promise<void>((resolve) => {
        this.inflater!.once('end', resolve);
        this.inflater!.once('error', (error: Error) => {
          this.fail(`the body does not decompress (${error.message})`);
          resolve();
        });
      });
    }
  }

  push(chunk: Buffer): void {
    if (this.failure !== undefined) return;
    if (this.inflater) this.inflater.write(chunk);
    else this.read(chunk);
  }

  /** Whether the response is an event stream (its first byte is then its time to first token). */
  get streamed(): boolean {
    return this.sse;
  }

  /** The usage-carrying value to normalise (a response, or the usage events of a stream), once the body has ended. */
  async end(): Promise<unknown> {
    if (this.inflater && this.failure === undefined) {
      this.inflater.end();
      await this.inflated;
    }
    if (this.failure !== undefined) return undefined;
    this.text(this.decoder.end());
    if (this.sse) {
      this.line(this.pending);
      this.dispatch();
      const events = [this.start, this.last].filter((e) => e !== undefined);
      return events.length > 0 ? events : undefined;
    }
    try {
      return JSON.parse(this.pending) as unknown;
    } catch {
      this.failure = 'the body is not JSON';
      return undefined;
    } finally {
      this.pending = '';
    }
  }

  private fail(why: string): void {
    this.failure ??= why;
    this.pending = '';
    this.data = [];
    this.inflater?.destroy();
  }

  private read(chunk: Buffer): void {
    if (this.failure === undefined) this.text(this.decoder.write(chunk));
  }

  private text(text: string): void {
    if (text === '') return;
    this.held += text.length;
    if (this.held > this.limit) {
      this.fail(`more than ${this.limit} characters to hold`);
      return;
    }
    if (!this.sse) {
      this.pending += text;
      return;
    }
    // A chunk may end between the \r and \n of one line ending.
    const rest = this.afterCr && text.startsWith('\n') ? text.slice(1) : text;
    this.afterCr = rest.endsWith('\r');
    const lines = (this.pending + rest).split(/\r\n|\r|\n/);
    this.pending = lines.pop()!;
    for (const line of lines) this.line(line);
    this.held = this.pending.length + this.data.reduce((n, d) => n + d.length, 0);
  }

  private line(line: string): void {
    if (line === '') this.dispatch();
    else if (line.startsWith('data:')) this.data.push(line.slice(line.startsWith('data: ') ? 6 : 5));
  }

  private dispatch(): void {
    if (this.data.length === 0) return;
    const payload = this.data.join('\n');
    this.data = [];
    if (!CARRIES_USAGE.test(payload)) return;
    let event: unknown;
    try {
      event = JSON.parse(payload);
    } catch {
      return;
    }
    if (typeof event !== 'object' || event === null) return;
    if ((event as { type?: unknown }).type === 'message_start') this.start ??= event;
    else this.last = event;
  }
}
