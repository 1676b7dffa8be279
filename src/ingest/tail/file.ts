// One followed file: an open handle (so a renamed or deleted file can still
// be read to its end), how far it is read and stored, and its format. Each
// read takes what was appended, cuts it into complete units, decodes them and
// hands the result to the sink together with the checkpoint that covers
// exactly those units: both are stored in one transaction or not at all.
import type { FileHandle } from 'node:fs/promises';
import { hashString } from '../../core/hash.js';
import type { CacheEvent } from '../../core/types.js';
import type { BatchCounts, ExternalBreak, TailCheckpoint, TokenPoint } from '../../store/store.js';
import { emptyDecoded, hasContent, type Decoded, type Decoder } from './formats/decoder.js';
import { decoderOf, DETECT_BYTES, detectFormat, framerOf, FORMAT_NOTES, type Format } from './formats/index.js';
import { LF, type Framer } from './frames/frame.js';

/** Bytes per read: large enough for speed, small enough that a batch stays short. */
export const CHUNK = 1 << 20;
/** The part of a file whose hash tells it from another file that took its inode, or from its own rewrite. */
const HEAD = 512;
/** A line or object longer than this is given up (reported) instead of held in memory. */
const MAX_UNIT = 64 * 2 ** 20;
/** A checkpoint that covers no stored data (ignored lines) is written at most this often. */
const CHECKPOINT_EVERY_MS = 1000;

export interface TailBatch {
  path: string;
  events: CacheEvent[];
  tokenPoints: TokenPoint[];
  externalBreaks: ExternalBreak[];
  checkpoint: TailCheckpoint;
}

/**
 * A refusal of the sink that retrying cannot fix (a server that refuses the
 * key): the file stops reading, and the tailer stops, instead of retrying
 * the same batch forever.
 */
export class TailStopped extends Error {}

/** Where the tailer's output goes. */
export interface FileHooks {
  /** Stores a batch and its checkpoint together; durable when it resolves. */
  write(batch: TailBatch): Promise<BatchCounts>;
  rejected(path: string, line: number, error: string): void;
  notice(message: string): void;
  /** After each read of a backlog: `done` of `total` bytes. */
  progress?(path: string, done: number, total: number): void;
  /** The sink refused for good (TailStopped): nothing more is read from this file. */
  stopped?(error: TailStopped): void;
}

/** Where reading starts. */
export interface Start {
  offset: number;
  /** The line number at offset; undefined when starting at the end of a file (counted only if a line number is needed). */
  line: number | undefined;
  /** Units that end at or before this byte were stored already: decoded again (to complete pairs), not stored again. */
  skipUntil: number;
  /** The offset may be inside a unit (the end of a file being written): skip to the next boundary. */
  resync: boolean;
}

export interface FileStats {
  bytes: number;
  units: number;
  accepted: number;
  duplicates: number;
  externalBreaks: number;
  rejected: number;
  ignored: number;
}

function hashBytes(bytes: Buffer): string {
  // latin1 maps each byte to one code unit: the hash is of the bytes, whatever their encoding.
  return hashString(bytes.toString('latin1'));
}

/** Line breaks before `end`, to number the lines of a file read from its middle. */
async function linesBefore(handle: FileHandle, end: number): Promise<number> {
  const buffer = Buffer.allocUnsafe(CHUNK);
  let lines = 0;
  for (let at = 0; at < end; ) {
    const { bytesRead } = await handle.read(buffer, 0, Math.min(CHUNK, end - at), at);
    if (bytesRead === 0) break;
    for (let i = buffer.indexOf(LF, 0); i >= 0 && i < bytesRead; i = buffer.indexOf(LF, i + 1)) lines++;
    at += bytesRead;
  }
  return lines;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function batchSize(d: Decoded): number {
  return d.events.length + d.tokenPoints.length + d.externalBreaks.length;
}

export class FileTail {
  /** The file's current path (updated when it is renamed while followed). */
  path: string;
  /** When the file stopped matching the patterns (renamed away, deleted, a link switched), if it has. */
  detachedAt: number | undefined;
  lastGrowthAt: number;
  readonly stats: FileStats = { bytes: 0, units: 0, accepted: 0, duplicates: 0, externalBreaks: 0, rejected: 0, ignored: 0 };

  private format: Format | undefined;
  private unsupported = false;
  private framer: Framer | undefined;
  private decoder: Decoder | undefined;
  /** File offset of carry[0]: everything before it is decoded and (if it carried data) stored. */
  private consumed: number;
  /** Line number of carry[0], counted from 1 at the start offset: add `shift` for the line in the file. */
  private line = 1;
  /** Lines before the start offset; undefined until a line number is first needed (starting at a file's end). */
  private shift: number | undefined;
  private readonly startOffset: number;
  private readTo: number;
  private carry = Buffer.alloc(0);
  private skipUntil: number;
  private resync: boolean;
  /** The last point after which no decoded unit waited for another: where a restart must read from. */
  private quiet: { offset: number; line: number };
  private head = { length: 0, hash: hashBytes(Buffer.alloc(0)) };
  private dirty = false;
  private lastWriteAt = 0;
  private running: Promise<void> | undefined;
  private again = false;
  private stopping = false;
  /** The sink refused for good: no checkpoint is owed to it either. */
  private refused = false;

  constructor(
    path: string,
    readonly fileId: string,
    private readonly handle: FileHandle,
    start: Start,
    private readonly options: { format?: Format | undefined; batch: number; now: () => number },
    private readonly hooks: FileHooks,
  ) {
    this.path = path;
    this.consumed = start.offset;
    this.readTo = start.offset;
    this.startOffset = start.offset;
    this.shift = start.line === undefined ? undefined : start.line - 1;
    this.skipUntil = start.skipUntil;
    this.resync = start.resync;
    this.quiet = { offset: start.offset, line: 1 };
    this.lastGrowthAt = options.now();
  }

  /** Reads whatever was appended; calls while a read runs make it read again after. */
  pump(): Promise<void> {
    if (this.stopping) return Promise.resolve();
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      try {
        do {
          this.again = false;
          await this.drain();
        } while (this.again && !this.stopping);
      } catch (error) {
        if (error instanceof TailStopped) {
          this.stopping = true;
          this.refused = true;
          this.hooks.stopped?.(error);
        } else {
          this.hooks.notice(`${this.path}: reading failed (${(error as Error).message}); trying again at the next poll`);
        }
      } finally {
        this.running = undefined;
      }
    })();
    return this.running;
  }

  /** Whether a file of this size has nothing for a read to do (what a poll of an idle file finds). */
  idleAt(size: number): boolean {
    if (this.unsupported) return true;
    return size === this.readTo && (this.format !== undefined || size === 0) && !this.dirty && this.running === undefined;
  }

  /** Takes the head hash a checkpoint was written with, so a changed file is noticed at once. */
  adoptHead(length: number, hash: string): void {
    this.head = { length, hash };
  }

  /** Stops reading, writes a checkpoint that is still owed, and closes the file. */
  async close(): Promise<void> {
    this.stopping = true;
    await this.running;
    try {
      if (this.dirty && this.format !== undefined && !this.refused) await this.hooks.write(this.emptyBatch());
    } finally {
      await this.handle.close();
    }
  }

  /** Whether the file's data is gone for good (deleted while followed): its checkpoint can go too. */
  async deleted(): Promise<boolean> {
    return (await this.handle.stat()).nlink === 0;
  }

  private async drain(): Promise<void> {
    const { size } = await this.handle.stat();
    // Nothing new (what a poll of an idle file finds): no reads at all.
    if (size !== this.readTo || this.format === undefined) {
      if (size < this.readTo || !(await this.sameHead(size))) this.restart(size < this.readTo ? 'truncated' : 'rewritten');
      if (this.unsupported || !(await this.ensureFormat(size))) return;
      await this.readToEnd(size);
    }
    if (this.dirty && this.options.now() - this.lastWriteAt >= CHECKPOINT_EVERY_MS) await this.send(this.emptyBatch());
  }

  /** Reads from readTo to the end, which may move while reading. */
  private async readToEnd(size: number): Promise<void> {
    let end = size;
    while (this.readTo < end && !this.stopping) {
      const length = Math.min(CHUNK, end - this.readTo);
      const chunk = Buffer.allocUnsafe(length);
      const { bytesRead } = await this.handle.read(chunk, 0, length, this.readTo);
      if (bytesRead === 0) break;
      if (this.resync) await this.startResync();
      this.readTo += bytesRead;
      this.stats.bytes += bytesRead;
      this.lastGrowthAt = this.options.now();
      this.carry = this.carry.length === 0 ? chunk.subarray(0, bytesRead) : Buffer.concat([this.carry, chunk.subarray(0, bytesRead)]);
      await this.parse();
      this.hooks.progress?.(this.path, this.readTo, size);
      if (this.readTo >= end) end = (await this.handle.stat()).size;
    }
  }

  /** The whole content was replaced: read it from the start. */
  private restart(why: 'truncated' | 'rewritten'): void {
    this.hooks.notice(`${this.path}: ${why}; reading it again from the start`);
    this.consumed = 0;
    this.readTo = 0;
    this.line = 1;
    this.shift = 0;
    this.skipUntil = 0;
    this.resync = false;
    this.quiet = { offset: 0, line: 1 };
    this.carry = Buffer.alloc(0);
    this.head = { length: 0, hash: hashBytes(Buffer.alloc(0)) };
    this.framer?.reset();
    if (this.format !== undefined) this.decoder = decoderOf(this.format, { path: this.path });
    this.dirty = true;
  }

  /** Whether the first bytes are still those read before; the known head grows up to HEAD bytes. */
  private async sameHead(size: number): Promise<boolean> {
    const want = Math.min(HEAD, size);
    if (want < this.head.length) return false;
    if (want === 0) return true;
    const bytes = Buffer.alloc(want);
    await this.handle.read(bytes, 0, want, 0);
    if (hashBytes(bytes.subarray(0, this.head.length)) !== this.head.hash) return false;
    if (want > this.head.length) this.head = { length: want, hash: hashBytes(bytes) };
    return true;
  }

  /** Decides the format from the file's first line; false while that line is incomplete. */
  private async ensureFormat(size: number): Promise<boolean> {
    if (this.format !== undefined) return true;
    let format: Format | 'unknown' | undefined = this.options.format;
    if (format === undefined) {
      const head = Buffer.alloc(Math.min(DETECT_BYTES, size));
      if (head.length === 0) return false;
      await this.handle.read(head, 0, head.length, 0);
      format = detectFormat(head, this.path);
      if (format === undefined) return false;
    }
    if (format === 'unknown') {
      this.unsupported = true;
      this.hooks.notice(`${this.path}: not a format tail reads (its first line is neither JSON nor a debug log line); skipped. Force one with --format`);
      return false;
    }
    this.format = format;
    this.framer = framerOf(format);
    this.decoder = decoderOf(format, { path: this.path });
    const note = FORMAT_NOTES[format];
    if (note) this.hooks.notice(`${this.path}: ${note}`);
    return true;
  }

  private async startResync(): Promise<void> {
    this.resync = false;
    let previous: number | undefined;
    if (this.consumed > 0) {
      const byte = Buffer.alloc(1);
      await this.handle.read(byte, 0, 1, this.consumed - 1);
      previous = byte[0];
    }
    this.framer!.resync(previous);
  }

  /** Decodes the complete units in carry, handing them over in batches of at most `batch` records. */
  private async parse(): Promise<void> {
    const framer = this.framer!;
    const decoder = this.decoder!;
    let pos = 0;
    let line = this.line;
    let out = emptyDecoded();
    for (;;) {
      const frame = framer.next(this.carry, pos);
      if (frame) {
        const unitLine = line + frame.linesBefore;
        const replayed = this.consumed + frame.next <= this.skipUntil;
        if (frame.kind === 'unit') decoder.decode(this.carry, frame.start, frame.end, unitLine, replayed ? emptyDecoded() : out);
        else if (frame.kind === 'bad' && !replayed) out.rejected.push({ line: unitLine, error: frame.error ?? 'unreadable' });
        line += frame.lines;
        pos = frame.next;
        if (!decoder.waiting()) this.quiet = { offset: this.consumed + pos, line };
        if (batchSize(out) < this.options.batch) continue;
      } else if (this.carry.length - pos > MAX_UNIT) {
        // No end in sight (a binary file, a writer that lost its newlines): give it up rather than hold it all.
        out.rejected.push({ line, error: `no end of line or object within ${MAX_UNIT / 2 ** 20} MiB; skipped to the next one` });
        for (let i = this.carry.indexOf(LF, pos); i >= 0; i = this.carry.indexOf(LF, i + 1)) line++;
        pos = this.carry.length;
        framer.reset();
        framer.resync(this.carry[pos - 1]);
        this.quiet = { offset: this.consumed + pos, line };
      }
      await this.commit(out, pos, line);
      if (!frame) return;
      pos = 0;
      line = this.line;
      out = emptyDecoded();
    }
  }

  /** Stores what units up to `pos` produced, with their checkpoint; then moves past them. */
  private async commit(out: Decoded, pos: number, line: number): Promise<void> {
    const s = this.stats;
    s.units += out.units;
    s.ignored += out.ignored;
    s.rejected += out.rejected.length;
    for (const notice of out.notices) this.hooks.notice(`${this.path}: ${notice}`);
    const offset = this.consumed + pos;
    if (pos === 0 && out.rejected.length === 0) return;
    const shift = await this.lineShift();
    for (const r of out.rejected) this.hooks.rejected(this.path, r.line + shift, r.error);
    for (const b of out.externalBreaks) if (b.line !== null) b.line += shift;
    if (hasContent(out)) {
      await this.send({
        path: this.path,
        events: out.events,
        tokenPoints: out.tokenPoints,
        externalBreaks: out.externalBreaks,
        checkpoint: this.checkpointAt(offset),
      });
    } else if (pos > 0) {
      this.dirty = true;
    }
    this.carry = this.carry.subarray(pos);
    this.consumed = offset;
    this.line = line;
  }

  private checkpointAt(offset: number): TailCheckpoint {
    return {
      fileId: this.fileId,
      path: this.path,
      offset: Math.max(offset, this.skipUntil),
      resumeAt: this.quiet.offset,
      resumeLine: this.quiet.line + (this.shift ?? 0),
      headLength: this.head.length,
      headHash: this.head.hash,
    };
  }

  /** Lines before the start offset, counted the first time a line number is needed. */
  private async lineShift(): Promise<number> {
    this.shift ??= await linesBefore(this.handle, this.startOffset);
    return this.shift;
  }

  private emptyBatch(): TailBatch {
    return { path: this.path, events: [], tokenPoints: [], externalBreaks: [], checkpoint: this.checkpointAt(this.consumed) };
  }

  /** Stores a batch, waiting and retrying while the store is busy; gives up only when stopping. */
  private async send(batch: TailBatch): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        const counts = await this.hooks.write(batch);
        this.stats.accepted += counts.accepted;
        this.stats.duplicates += counts.duplicates;
        this.stats.externalBreaks += counts.externalBreaks ?? 0;
        this.stats.rejected += counts.rejected?.length ?? 0;
        // Their messages quote ids; only the field is said, as for rejected lines.
        if (counts.rejected) this.hooks.notice(`${this.path}: ${counts.rejected.length} event(s) not stored (${[...new Set(counts.rejected.map((r) => r.field))].join(', ')})`);
        this.dirty = false;
        this.lastWriteAt = this.options.now();
        return;
      } catch (error) {
        if (this.stopping || error instanceof TailStopped) throw error;
        const retryAfter = (error as { retryAfter?: unknown }).retryAfter;
        const waitMs = Math.min(5_000, typeof retryAfter === 'number' ? retryAfter * 1000 : 1000 * 2 ** Math.min(attempt, 2));
        if (attempt === 0) this.hooks.notice(`${this.path}: cannot store what was read (${(error as Error).message}); retrying`);
        await sleep(waitMs);
      }
    }
  }
}
