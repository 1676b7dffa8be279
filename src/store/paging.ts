// Reading a paged Store list a thousand at a time, bounded: the one loop
// behind every read that gathers more than a page (the breaks of a range for
// fingerprints, alerts, computed filters and insights; reports and sessions
// for agreement).
import type { Page, PageQuery } from './store.js';

const PAGE = 1000;
/** Items readAll reads at most: the reports around a page of breaks, or the breaks of a range. */
export const MAX_RECORDS = 100_000;

export interface PagesRead {
  /** Items read. */
  read: number;
  /** The cursor after the last page read when the list went on (the bound, or `take`, stopped it); undefined at its end. */
  cursor: string | undefined;
}

/** Where a page handed to `take` starts: the cursor it was read from (undefined: the list's start), and the items read before it. */
export interface PageStart {
  cursor: string | undefined;
  readBefore: number;
}

/**
 * Hands each page of `read` to `take` until the list ends, `max` items are
 * read, or `take` returns false; from the start of the list, or from `from`
 * (a cursor the list issued).
 */
export async function readPages<T>(
  read: (page: PageQuery) => Promise<Page<T>>,
  max: number,
  take: (items: T[], start: PageStart) => boolean | void | Promise<boolean | void>,
  from?: string,
): Promise<PagesRead> {
  let count = 0;
  let cursor = from;
  let more = true;
  do {
    const limit = Math.min(PAGE, max - count);
    const start = { cursor, readBefore: count };
    const page = await read(cursor === undefined ? { limit } : { limit, cursor });
    count += page.items.length;
    cursor = page.nextCursor ?? undefined;
    more = (await take(page.items, start)) !== false;
  } while (cursor !== undefined && count < max && more);
  return { read: count, cursor };
}

/** Every item of a list, up to `max`. */
export async function readAll<T>(read: (page: PageQuery) => Promise<Page<T>>, max = MAX_RECORDS): Promise<T[]> {
  const items: T[] = [];
  await readPages(read, max, (page) => {
    items.push(...page);
  });
  return items;
}
