// A response body read as it streams: an event stream (SSE) is parsed line by
// line and only the events that carry usage are kept; any other body is held
// up to a limit and parsed as JSON at its end. Text in, values out: the proxy
// decodes and decompresses bytes before this, a fetch wrapper uses a
// TextDecoder, so the same reading serves the server and the library. Each
// character is looked at once: an unfinished line is kept as the pieces it
// came in, joined when its line ends, so a long line costs what it weighs.

/** A data payload that may carry a usage object, checked before parsing it. */
const CARRIES_USAGE = /"usage(?:Metadata)?"\s*:\s*\{/;

/** A line ending: CRLF, CR or LF. */
const LINE_END = /\r\n?|\n/g;

export class UsageText {
  /** An event stream's unfinished line, or a whole body, as the pieces it came in. */
  private pending: string[] = [];
  /** Data lines of the event being read. */
  private data: string[] = [];
  /** Characters held: pending and data. */
  private held = 0;
  private afterCr = false;
  /** First Anthropic message_start, and the latest other event that carried usage. */
  private start: unknown;
  private last: unknown;
  /** Why nothing can be read: set once, and from then on text is ignored. */
  failure: string | undefined;

  constructor(
    /** The body is an event stream (content type text/event-stream). */
    readonly sse: boolean,
    /** Characters held at most (an unfinished event, or a whole JSON body). */
    private readonly limit: number,
  ) {}

  /** Characters held now: the unfinished line and event of a stream, or the body so far. */
  get size(): number {
    return this.held;
  }

  /** Stops reading, for `why`; the first reason is kept. */
  fail(why: string): void {
    this.failure ??= why;
    this.pending = [];
    this.data = [];
    this.held = 0;
  }

  push(text: string): void {
    if (text === '' || this.failure !== undefined) return;
    this.held += text.length;
    if (this.held > this.limit) {
      this.fail(`more than ${this.limit} characters to hold`);
      return;
    }
    if (!this.sse) {
      this.pending.push(text);
      return;
    }
    // A chunk may end between the \r and \n of one line ending.
    let from = this.afterCr && text.startsWith('\n') ? 1 : 0;
    this.held -= from;
    this.afterCr = text.endsWith('\r');
    LINE_END.lastIndex = from;
    for (let found = LINE_END.exec(text); found !== null; found = LINE_END.exec(text)) {
      this.pending.push(text.slice(from, found.index));
      const line = this.pending.join('');
      this.pending = [];
      this.held -= line.length + found[0].length;
      this.line(line);
      from = LINE_END.lastIndex;
    }
    if (from < text.length) this.pending.push(text.slice(from));
  }

  /** The usage-carrying value to normalise (a response, or the usage events of a stream); undefined: none. */
  end(): unknown {
    if (this.failure !== undefined) return undefined;
    if (this.sse) {
      this.line(this.pending.join(''));
      this.pending = [];
      this.dispatch();
      const events = [this.start, this.last].filter((e) => e !== undefined);
      return events.length > 0 ? events : undefined;
    }
    try {
      return JSON.parse(this.pending.join('')) as unknown;
    } catch {
      this.failure = 'the body is not JSON';
      return undefined;
    } finally {
      this.pending = [];
    }
  }

  /** A whole line; a data line stays held (in `data`) until its event ends. */
  private line(line: string): void {
    if (line === '') this.dispatch();
    else if (line.startsWith('data:')) {
      const data = line.slice(line.startsWith('data: ') ? 6 : 5);
      this.data.push(data);
      this.held += data.length;
    }
  }

  private dispatch(): void {
    if (this.data.length === 0) return;
    const payload = this.data.join('\n');
    this.held -= payload.length - (this.data.length - 1);
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
