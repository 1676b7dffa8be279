import { describe, expect, it } from 'vitest';
import { readAll, readPages } from '../../src/store/paging.js';
import type { Page, PageQuery } from '../../src/store/store.js';

/** A list of `n` numbers served as a Store serves a paged list: the cursor is the next index. */
function list(n: number) {
  const asked: number[] = [];
  const read = async (page: PageQuery): Promise<Page<number>> => {
    asked.push(page.limit);
    const from = page.cursor === undefined ? 0 : Number(page.cursor);
    const items = Array.from({ length: Math.max(0, Math.min(page.limit, n - from)) }, (_, i) => from + i);
    const next = from + items.length;
    return { items, nextCursor: next < n ? String(next) : null };
  };
  return { read, asked };
}

describe('readPages', () => {
  it('reads a list to its end a thousand at a time, with no cursor left', async () => {
    const { read, asked } = list(2_500);
    const seen: number[] = [];
    expect(await readPages(read, 10_000, (items) => void seen.push(...items))).toEqual({ read: 2_500, cursor: undefined });
    expect(seen).toEqual(Array.from({ length: 2_500 }, (_, i) => i));
    expect(asked).toEqual([1000, 1000, 1000]);
  });

  it('stops at the bound, asking for no more than it, and leaves the cursor where the list goes on', async () => {
    const { read, asked } = list(5_000);
    expect(await readPages(read, 1_500, () => {})).toEqual({ read: 1_500, cursor: '1500' });
    expect(asked).toEqual([1000, 500]);
    expect(await readAll(list(5_000).read, 1_200)).toHaveLength(1_200);
  });

  it('stops when the taker says so', async () => {
    const { read, asked } = list(5_000);
    let pages = 0;
    expect(await readPages(read, 10_000, () => ++pages < 2)).toEqual({ read: 2_000, cursor: '2000' });
    expect(asked).toHaveLength(2);
  });
});
