// The agent version where an alert's change began, read from breaks (what
// lowers the cache rate, adds the cost, or is the new reason), once, when the
// alert fires: of the window's breaks, oldest first, the first that ran a
// version no break of the window before it (as long) ran; else the version
// most of the window's breaks ran; null when none names a version, or when
// either window holds more breaks than are read (the answer would be a guess).
import { readPages } from '../store/paging.js';
import type { BreakFilters, Store } from '../store/store.js';

/** Breaks read at most (newest first) of each window: the alert's and the one before it. */
export const MAX_READ = 10_000;

/** The versions of a range's breaks, oldest first; undefined when the range holds more than `max`. */
async function versionsOf(store: Store, project: string, from: number, to: number, filters: BreakFilters, max: number) {
  const read: { ts: number; version: string }[] = [];
  const { cursor } = await readPages((page) => store.breaks(project, { from, to }, filters, page), max, (records) => {
    for (const record of records) if (record.agentVersion !== null) read.push({ ts: record.ts, version: record.agentVersion });
  });
  return cursor === undefined ? read.sort((a, b) => a.ts - b.ts) : undefined;
}

export async function versionWhereChangeBegan(store: Store, project: string, from: number, to: number, filters: BreakFilters, max = MAX_READ): Promise<string | null> {
  const during = await versionsOf(store, project, from, to, filters, max);
  const before = during && (await versionsOf(store, project, from - (to - from), from, filters, max));
  if (!during || !before) return null;
  const known = new Set(before.map((b) => b.version));
  const first = during.find((b) => !known.has(b.version));
  if (first) return first.version;
  const counts = new Map<string, number>();
  for (const { version } of during) counts.set(version, (counts.get(version) ?? 0) + 1);
  let most: string | null = null;
  for (const [version, count] of counts) if (most === null || count > counts.get(most)!) most = version;
  return most;
}
