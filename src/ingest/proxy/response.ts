// Reads a response as it is passed on to the client: a copy of each chunk is
// decoded (and decompressed) here and the bytes themselves are never held
// back; the text goes to core/sse.ts, which keeps only what carries usage.
// What it holds counts in the in-flight budget (the most it has held, a
// character as a byte); past the budget, the answer is not read.
import { StringDecoder } from 'node:string_decoder';
import type { Transform } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import { UsageText } from '../../core/sse.js';
import { CachebreakError } from '../../errors.js';
import type { Holding } from '../inflight.js';

function inflaterFor(encoding: string): Transform | undefined {
  if (encoding === 'gzip' || encoding === 'x-gzip') return createGunzip();
  if (encoding === 'deflate') return createInflate();
  if (encoding === 'br') return createBrotliDecompress();
  return undefined;
}

export class ResponseReader {
  private readonly decoder = new StringDecoder('utf8');
  private readonly text: UsageText;
  private readonly inflater: Transform | undefined;
  private readonly inflated: Promise<void> | undefined;
  /** Characters taken from the budget so far. */
  private taken = 0;
  /** Whether the answer went unread for the budget, rather than for what it is. */
  overBudget = false;
  /** Released: an inflater may still be producing text, which is no longer read. */
  private released = false;

  constructor(
    contentType: string,
    contentEncoding: string,
    limit: number,
    private readonly holding: Holding,
  ) {
    this.text = new UsageText(contentType.toLowerCase().startsWith('text/event-stream'), limit);
    const encoding = contentEncoding.trim().toLowerCase();
    if (encoding !== '' && encoding !== 'identity') {
      this.inflater = inflaterFor(encoding);
      if (!this.inflater) {
        this.text.fail(`content-encoding ${encoding.slice(0, 20)} is not read`);
        return;
      }
      this.inflater.on('data', (chunk: Buffer) => this.read(chunk));
      // Settles however the inflater stops: at its end, on corrupt input, or destroyed past the limit
      // (which emits neither 'end' nor 'error': waiting for those held the call, and its request body, forever).
      this.inflated = new Promise<void>((resolve) => {
        this.inflater!.once('close', resolve);
        this.inflater!.once('error', (error: Error) => {
          this.fail(`the body does not decompress (${error.message})`);
          resolve();
        });
      });
    }
  }

  /** Why nothing can be read; undefined while it can. */
  get failure(): string | undefined {
    return this.text.failure;
  }

  push(chunk: Buffer): void {
    if (this.failure !== undefined || this.released) return;
    if (this.inflater) this.inflater.write(chunk);
    else this.read(chunk);
  }

  /** Whether the response is an event stream (its first byte is then its time to first token). */
  get streamed(): boolean {
    return this.text.sse;
  }

  /** The usage-carrying value to normalise (a response, or the usage events of a stream), once the body has ended. */
  async end(): Promise<unknown> {
    if (this.inflater && this.failure === undefined) {
      this.inflater.end();
      await this.inflated;
    }
    if (this.failure !== undefined) return undefined;
    this.text.push(this.decoder.end());
    return this.text.end();
  }

  /** Stops reading and gives back what was held. */
  private fail(why: string): void {
    this.text.fail(why);
    this.inflater?.destroy();
    this.holding.release();
  }

  /** Stops reading for good and gives back what it held, once its result is out (or the call is over unread). */
  release(): void {
    this.released = true;
    this.inflater?.destroy();
    this.holding.release();
  }

  private read(chunk: Buffer): void {
    if (this.failure !== undefined || this.released) return;
    this.text.push(this.decoder.write(chunk));
    // Past the limit: nothing more is read, so nothing more is inflated.
    if (this.failure !== undefined) {
      this.fail(this.failure);
      return;
    }
    const more = this.text.size - this.taken;
    if (more <= 0) return;
    try {
      this.holding.take(more);
      this.taken += more;
    } catch (error) {
      if (!(error instanceof CachebreakError)) throw error;
      this.overBudget = true;
      this.fail(error.message);
    }
  }
}
