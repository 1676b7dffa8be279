// fs.watch on each directory involved (not on files: a watch on a file stays
// on its inode after a rename; a directory sees appends, creations, renames
// and deletions of its entries). Watch events can be lost or coalesced, so
// the tailer also polls slowly: the watches make it prompt, the poll makes
// it certain.
import { watch, type FSWatcher } from 'node:fs';

export type WatchEvent = (directory: string, type: 'change' | 'rename', name: string | undefined) => void;

export class DirectoryWatches {
  private readonly watchers = new Map<string, FSWatcher>();

  constructor(private readonly onEvent: WatchEvent) {}

  /** Watches exactly these directories; one that does not exist yet is tried again at the next call. */
  set(directories: Iterable<string>): void {
    const wanted = new Set(directories);
    for (const [dir, watcher] of this.watchers) {
      if (wanted.has(dir)) continue;
      watcher.close();
      this.watchers.delete(dir);
    }
    for (const dir of wanted) if (!this.watchers.has(dir)) this.add(dir);
  }

  close(): void {
    for (const watcher of this.watchers.values()) watcher.close();
    this.watchers.clear();
  }

  private add(dir: string): void {
    let watcher: FSWatcher;
    try {
      // Not persistent: the tailer's own timer decides how long the process lives.
      watcher = watch(dir, { persistent: false }, (type, name) => this.onEvent(dir, type, name ?? undefined));
    } catch {
      return;
    }
    watcher.on('error', () => {
      // The directory went away: forget the watch, and let a scan see what changed.
      watcher.close();
      this.watchers.delete(dir);
      this.onEvent(dir, 'rename', undefined);
    });
    this.watchers.set(dir, watcher);
  }
}
