// The agent version where an alert's change began, read from breaks (what
// lowers the cache rate, adds the cost, or is the new reason), once, when the
// alert fires: of the window's breaks, oldest first, the first that ran a
// version no break of the window before it (as long) ran; else the version
// most of the window's breaks ran; null when none names a version.
import type { BreakFilters, Store } from '../store/store.js';

/** Breaks read at most (newest first) over the window and the one before it. */
export const MAX_READ = 10_000;
const PAGE = 1000;

export async function versionWhereChangeBegan(store: Store, project: string, from: number, to: number, filters: BreakFilters): Promise<string | null> {
  const before = new Set<string>();
  const during: { ts: number; version: string }[] = [];
  let cursor: string | undefined;
  let read = 0;
  do {
    const page = await store.breaks(project, { from: from - (to - from), to }, filters, cursor === undefined ? { limit: PAGE } : { limit: PAGE, cursor });
    for (const record of page.items) {
      if (record.agentVersion === null) continue;
      if (record.ts < from) before.add(record.agentVersion);
      else during.push({ ts: record.ts, version: record.agentVersion });
    }
    read += page.items.length;
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined && read < MAX_READ);
  during.sort((a, b) => a.ts - b.ts);
  const first = during.find((b) => !before.has(b.version));
  if (first) return first.version;
  const counts = new Map<string, number>();
  for (const { version } of during) counts.set(version, (counts.get(version) ?? 0) + 1);
  let most: string | null = null;
  for (const [version, count] of counts) if (most === null || count > counts.get(most)!) most = version;
  return most;
}
