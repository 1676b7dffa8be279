// Times as users write them: RFC 3339 with a zone, or epoch milliseconds; and
// the range of times cachebreak takes in.

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i;

/** Epoch ms, or undefined when `raw` is neither form. */
export function parseTime(raw: string): number | undefined {
  const ms = /^\d+$/.test(raw) ? Number(raw) : RFC3339.test(raw) ? Date.parse(raw) : NaN;
  return Number.isSafeInteger(ms) ? ms : undefined;
}

export const TIME_FORMS = 'RFC 3339 or epoch milliseconds';

/**
 * Times of events: from 2000 to 2100. Epoch seconds read as milliseconds fall
 * before it (1970), microseconds and nanoseconds after it; and every time in
 * it can be written as RFC 3339.
 */
export const EVENT_TIMES = { from: Date.UTC(2000, 0, 1), to: Date.UTC(2100, 0, 1) } as const;

/** Times a query may name: from the epoch to the end of EVENT_TIMES. */
export const QUERY_TIMES = { from: 0, to: EVENT_TIMES.to } as const;

type Range = { readonly from: number; readonly to: number };

const isoOf = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');

/** "2000-01-01T00:00:00Z to 2100-01-01T00:00:00Z" */
export function rangeText(range: Range): string {
  return `${isoOf(range.from)} to ${isoOf(range.to)}`;
}

/** Why `ms` is not a time in `range` (what it looks like when it is one in other units); undefined when it is. */
export function timeProblem(ms: number, range: Range = EVENT_TIMES): string | undefined {
  if (ms >= range.from && ms < range.to) return undefined;
  const within = (scaled: number) => scaled >= EVENT_TIMES.from && scaled < EVENT_TIMES.to;
  const unit = within(ms * 1000) ? ' (it reads as epoch seconds: send milliseconds)'
    : within(ms / 1000) ? ' (it reads as epoch microseconds: send milliseconds)'
    : within(ms / 1e6) ? ' (it reads as epoch nanoseconds: send milliseconds)'
    : '';
  return `expected a time from ${rangeText(range)}${unit}`;
}

/** A stored time as RFC 3339, or null when what is stored is no time (a row written by something else). */
export function storedIso(ms: number): string | null {
  const date = new Date(ms);
  return Number.isNaN(date.getTime()) ? null : date.toISOString();
}
