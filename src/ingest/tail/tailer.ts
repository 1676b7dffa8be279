// Follows every file that matches the patterns: by identity (device and
// inode), not by name, so a file renamed away (rotation) is read to its end
// while the new file of that name is read from its start; a `latest` link
// that switches is a new file; a truncated file is read again from 0. New
// bytes are noticed through fs.watch on the directories involved, with a slow
// poll as the safety net: following idle files costs next to no CPU.
//
// Only regular files are read. A FIFO, a device or a socket that matches is
// skipped with a notice (reading one could block, or never end), and so is a
// link that leads outside the directories the patterns watch (someone who can
// write there could otherwise make the tail read any file this user can),
// unless --follow-symlinks.
import { constants, realpathSync, statSync, type BigIntStats } from 'node:fs';
import { open, stat, type FileHandle } from 'node:fs/promises';
import { dirname, join, sep } from 'node:path';
import type { BatchCounts, TailCheckpoint } from '../../store/store.js';
import { FileTail, TailStopped, type FileHooks, type FileStats, type Start, type TailBatch } from './file.js';
import type { Format } from './formats/index.js';
import { compilePattern, expand, type Pattern } from './glob.js';
import { rejectionText } from './rejection.js';
import { DirectoryWatches } from './watch.js';
import { hashString } from '../../core/hash.js';

export interface TailOptions {
  /** Paths and globs. */
  patterns: readonly string[];
  /** Forced; detected per file when absent. */
  format?: Format | undefined;
  /** Read files that exist at start (and have no checkpoint) from their start, not their end. */
  fromStart: boolean;
  /** Records per write at most. */
  batch: number;
  /** Follow links that lead outside the directories the patterns watch (default: skip them, with a notice). */
  followSymlinks?: boolean;
  /** The safety-net poll. Default 2 s. */
  pollMs?: number;
  /** How long a file that no longer matches (renamed away, deleted) is still read after it last grew. Default 5 s. */
  graceMs?: number;
  now?: () => number;
}

/** Where batches go, and where checkpoints come from: the same store, so both move together. */
export interface TailSink {
  write(batch: TailBatch): Promise<BatchCounts>;
  checkpoints(): Promise<TailCheckpoint[]>;
  forget(fileIds: readonly string[]): Promise<void>;
}

export type TailReport = Omit<FileHooks, 'write' | 'stopped'>;

export interface TailTotals extends FileStats {
  /** Files followed so far. */
  files: number;
}

/** What the first scan found without a checkpoint: start at the end, unless --from-start. */
type Moment = 'initial' | 'later';

const SCAN_DELAY_MS = 20;

/**
 * Opening never blocks (a FIFO swapped in after the scan would wait for a
 * writer) and never follows a link (the path given is already resolved).
 */
const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0) | (constants.O_NOFOLLOW ?? 0);

/** Distinct skipped entries remembered, so that each is reported once. */
const NOTICED_MAX = 10_000;

function kindOf(s: Pick<BigIntStats, 'isFIFO' | 'isCharacterDevice' | 'isBlockDevice' | 'isSocket'>): string {
  if (s.isFIFO()) return 'a FIFO (named pipe)';
  if (s.isCharacterDevice()) return 'a character device';
  if (s.isBlockDevice()) return 'a block device';
  if (s.isSocket()) return 'a socket';
  return 'not a regular file';
}

/** Whether `path` is `root` or below it. */
function inside(path: string, root: string): boolean {
  return path === root || path.startsWith(root.endsWith(sep) ? root : root + sep);
}

function realOrSelf(path: string): string {
  try {
    return realpathSync.native(path);
  } catch {
    return path;
  }
}

function idOf(s: { dev: bigint; ino: bigint }): string {
  return `${s.dev}:${s.ino}`;
}

async function headHash(handle: FileHandle, length: number): Promise<string> {
  const bytes = Buffer.alloc(length);
  const { bytesRead } = await handle.read(bytes, 0, length, 0);
  return hashString(bytes.subarray(0, bytesRead).toString('latin1'));
}

/** The directory itself, or its nearest ancestor that exists: where its creation will be seen. */
function nearestDirectory(dir: string): string {
  for (let d = dir; ; d = dirname(d)) {
    try {
      if (statSync(d).isDirectory() || d === dirname(d)) return d;
    } catch {
      if (d === dirname(d)) return d;
    }
  }
}

function realBase(base: string): boolean {
  try {
    return realpathSync.native(base) === base;
  } catch {
    return true;
  }
}

export class Tailer {
  private readonly patterns: Pattern[];
  private readonly files = new Map<string, FileTail>();
  private readonly byPath = new Map<string, FileTail>();
  /** Files that cannot be followed (unreadable): not tried again while they stay the same file. */
  private readonly skipped = new Set<string>();
  /** Entries skipped and already reported (links outside, FIFOs, devices): reported once each. */
  private readonly noticed = new Set<string>();
  private checkpoints = new Map<string, TailCheckpoint>();
  private checkpointPaths = new Map<string, string>();
  private readonly watches: DirectoryWatches;
  private readonly finished: FileStats = { bytes: 0, units: 0, accepted: 0, duplicates: 0, externalBreaks: 0, rejected: 0, ignored: 0 };
  private followed = 0;
  private timer: NodeJS.Timeout | undefined;
  private scanTimer: NodeJS.Timeout | undefined;
  private scanning: Promise<void> | undefined;
  private rescan = false;
  private stopped = false;
  private readonly now: () => number;
  private resolveFailed!: (error: TailStopped) => void;
  /** Resolves when the sink refused for good (TailStopped): the caller stops the tailer and reports it. */
  readonly failed = new Promise<TailStopped>((resolve) => (this.resolveFailed = resolve));
  /** The sink's refusal, once there is one. */
  failure: TailStopped | undefined;

  constructor(
    private readonly options: TailOptions,
    private readonly sink: TailSink,
    private readonly report: TailReport,
  ) {
    this.patterns = options.patterns.map((p) => compilePattern(p));
    this.now = options.now ?? Date.now;
    this.watches = new DirectoryWatches((dir, type, name) => this.onWatch(dir, type, name));
  }

  /** Opens what matches now (resuming from checkpoints), then follows until stop(). */
  async start(): Promise<void> {
    const loaded = await this.sink.checkpoints();
    this.checkpoints = new Map(loaded.map((c) => [c.fileId, c]));
    this.checkpointPaths = new Map(loaded.map((c) => [c.path, c.fileId]));
    await this.scan('initial');
    await this.forgetVanished(loaded);
    if (!this.stopped) this.timer = setInterval(() => this.scheduleScan(0), this.options.pollMs ?? 2000);
  }

  /** Stops watching, lets reads in flight finish, writes the checkpoints still owed and closes every file. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    clearTimeout(this.scanTimer);
    this.watches.close();
    await this.scanning;
    await Promise.all([...this.files.keys()].map((id) => this.close(id)));
  }

  totals(): TailTotals {
    const t: TailTotals = { ...this.finished, files: this.followed };
    for (const file of this.files.values()) {
      for (const key of Object.keys(file.stats) as (keyof FileStats)[]) t[key] += file.stats[key];
    }
    return t;
  }

  /** Resolves once every followed file has been read to its current end. */
  async settled(): Promise<void> {
    await this.scanning;
    await Promise.all([...this.files.values()].map((f) => f.pump()));
  }

  private onWatch(dir: string, type: 'change' | 'rename', name: string | undefined): void {
    if (this.stopped) return;
    if (type === 'change' && name !== undefined) {
      // An append to a followed file needs no scan; a change to a file no pattern can match needs nothing.
      const file = this.byPath.get(join(dir, name));
      if (file) return void file.pump();
      if (!this.patterns.some((p) => p.leaf.test(name))) return;
    }
    this.scheduleScan(SCAN_DELAY_MS);
  }

  private scheduleScan(delayMs: number): void {
    if (this.stopped || this.scanTimer) return;
    this.scanTimer = setTimeout(() => {
      this.scanTimer = undefined;
      void this.scan('later');
    }, delayMs);
    this.scanTimer.unref();
  }

  private scan(first: Moment): Promise<void> {
    if (this.scanning) {
      this.rescan = true;
      return this.scanning;
    }
    this.scanning = (async () => {
      try {
        let moment = first;
        do {
          this.rescan = false;
          await this.scanOnce(moment);
          // A file that appears during the first scan appeared after the start.
          moment = 'later';
        } while (this.rescan && !this.stopped);
      } catch (error) {
        this.report.notice(`scan failed: ${(error as Error).message}`);
      } finally {
        this.scanning = undefined;
      }
    })();
    return this.scanning;
  }

  /** Reports a skipped entry once (per key), not at every poll. */
  private skip(key: string, message: string): void {
    if (this.noticed.has(key)) return;
    if (this.noticed.size >= NOTICED_MAX) this.noticed.clear();
    this.noticed.add(key);
    this.report.notice(message);
  }

  private async scanOnce(moment: Moment): Promise<void> {
    const found = new Map<string, { path: string; size: number }>();
    const directories = new Set<string>();
    // Where a followed file may lead: the patterns' own directories, resolved.
    const roots = this.patterns.map((p) => realOrSelf(p.base));
    for (const pattern of this.patterns) {
      const { matches, directories: dirs } = expand(pattern);
      // Matches are named from the pattern's base: if that goes through a link, every name needs resolving.
      const baseIsReal = realBase(pattern.base);
      for (const d of dirs) directories.add(nearestDirectory(d));
      for (const { path, link } of matches) {
        try {
          // Synchronous: a poll of idle files is a few cheap system calls, not a round of promises per file.
          const real = link || !baseIsReal ? realpathSync.native(path) : path;
          if (real !== path && !this.options.followSymlinks && !roots.some((root) => inside(real, root))) {
            this.skip(`link ${path} ${real}`, `${path}: a link to ${real}, outside the watched directories; skipped (--follow-symlinks follows it)`);
            continue;
          }
          const s = statSync(real, { bigint: true });
          if (!s.isFile()) {
            if (!s.isDirectory()) this.skip(`kind ${idOf(s)}`, `${path}: ${kindOf(s)}, not a regular file; skipped`);
            continue;
          }
          if (!found.has(idOf(s))) found.set(idOf(s), { path: real, size: Number(s.size) });
          directories.add(dirname(real));
        } catch {
          // Gone between listing and looking, or a dangling link: the next scan sees what is there.
        }
      }
    }
    // A file read to its end after it stopped matching still needs its directory watched.
    for (const file of this.files.values()) directories.add(dirname(file.path));
    if (this.stopped) return;
    this.watches.set(directories);

    for (const [id, { path, size }] of found) {
      const file = this.files.get(id);
      if (file) {
        file.path = path;
        file.detachedAt = undefined;
        if (!file.idleAt(size)) void file.pump();
      } else if (!this.skipped.has(id)) {
        await this.follow(id, path, moment);
      }
    }
    const now = this.now();
    const graceMs = this.options.graceMs ?? 5_000;
    for (const [id, file] of this.files) {
      if (found.has(id)) continue;
      if (file.detachedAt === undefined) {
        file.detachedAt = now;
        this.report.notice(`${file.path}: no longer matched (renamed, deleted or relinked); reading it to its end`);
      }
      await file.pump();
      if (now - file.lastGrowthAt >= graceMs) await this.close(id);
    }
    this.byPath.clear();
    for (const file of this.files.values()) this.byPath.set(file.path, file);
  }

  private async follow(id: string, path: string, moment: Moment): Promise<void> {
    let handle: FileHandle;
    try {
      handle = await open(path, OPEN_FLAGS);
    } catch (error) {
      this.skipped.add(id);
      this.report.notice(`${path}: cannot read it (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}); skipped`);
      return;
    }
    const s = await handle.stat({ bigint: true });
    if (!s.isFile()) {
      // Replaced by a FIFO or a device between the scan and the open.
      await handle.close();
      this.skipped.add(idOf(s));
      this.skip(`kind ${idOf(s)}`, `${path}: ${kindOf(s)}, not a regular file; skipped`);
      return;
    }
    if (idOf(s) !== id) {
      // Replaced between the scan and the open: the next scan finds the new file.
      await handle.close();
      this.scheduleScan(SCAN_DELAY_MS);
      return;
    }
    const size = Number(s.size);
    const { start, checkpoint } = await this.startOf(id, path, handle, size, moment);
    const file = new FileTail(path, id, handle, start, { format: this.options.format, batch: this.options.batch, now: this.now }, {
      ...this.report,
      rejected: (file, line, error) => this.report.rejected(file, line, rejectionText(error)),
      write: (batch) => this.sink.write(batch),
      stopped: (error) => {
        this.failure ??= error;
        this.resolveFailed(error);
      },
    });
    if (checkpoint) file.adoptHead(checkpoint.headLength, checkpoint.headHash);
    this.files.set(id, file);
    this.byPath.set(path, file);
    this.followed++;
    void file.pump();
  }

  /** Where to start reading a file seen for the first time in this run. */
  private async startOf(
    id: string,
    path: string,
    handle: FileHandle,
    size: number,
    moment: Moment,
  ): Promise<{ start: Start; checkpoint?: TailCheckpoint }> {
    const fromZero: Start = { offset: 0, line: 1, skipUntil: 0, resync: false };
    const checkpoint = this.checkpoints.get(id);
    if (checkpoint) {
      this.checkpoints.delete(id);
      if (size >= checkpoint.offset && (await headHash(handle, checkpoint.headLength)) === checkpoint.headHash) {
        return { start: { offset: checkpoint.resumeAt, line: checkpoint.resumeLine, skipUntil: checkpoint.offset, resync: false }, checkpoint };
      }
      this.report.notice(`${path}: changed while not followed; reading it from the start`);
      return { start: fromZero };
    }
    if (moment === 'later') return { start: fromZero };
    const previous = this.checkpointPaths.get(path);
    if (previous !== undefined && previous !== id) {
      this.report.notice(`${path}: replaced while not followed; reading the new file from the start`);
      return { start: fromZero };
    }
    if (this.options.fromStart || size === 0) return { start: fromZero };
    return { start: { offset: size, line: undefined, skipUntil: size, resync: true } };
  }

  /** Checkpoints of files that are gone, or replaced by another file of the same name. */
  private async forgetVanished(loaded: readonly TailCheckpoint[]): Promise<void> {
    const gone: string[] = [];
    for (const c of loaded) {
      if (this.files.has(c.fileId)) continue;
      try {
        if (idOf(await stat(c.path, { bigint: true })) !== c.fileId) gone.push(c.fileId);
      } catch {
        gone.push(c.fileId);
      }
    }
    if (gone.length > 0) await this.sink.forget(gone);
  }

  private async close(id: string): Promise<void> {
    const file = this.files.get(id);
    if (!file) return;
    this.files.delete(id);
    this.byPath.delete(file.path);
    let deleted = false;
    try {
      deleted = await file.deleted();
      await file.close();
      if (deleted) await this.sink.forget([file.fileId]);
    } catch (error) {
      this.report.notice(`${file.path}: closing: ${(error as Error).message}`);
    }
    for (const key of Object.keys(file.stats) as (keyof FileStats)[]) this.finished[key] += file.stats[key];
  }
}
