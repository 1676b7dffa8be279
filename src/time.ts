// Times as users write them: RFC 3339 with a zone, or epoch milliseconds.

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i;

/** Epoch ms, or undefined when `raw` is neither form. */
export function parseTime(raw: string): number | undefined {
  const ms = /^\d+$/.test(raw) ? Number(raw) : RFC3339.test(raw) ? Date.parse(raw) : NaN;
  return Number.isSafeInteger(ms) ? ms : undefined;
}

export const TIME_FORMS = 'RFC 3339 or epoch milliseconds';
