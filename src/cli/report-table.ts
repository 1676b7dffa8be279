// Aligned tables and costs as the terminal summaries print them.
import { printable } from '../telemetry/logfmt.js';
import { count, usd } from './format.js';

/** Cells hold ids and names clients chose: their control characters are escaped, never sent to the terminal. */
export function table(rows: readonly (readonly string[])[], indent = '  ', textColumns = 1): string[] {
  rows = rows.map((row) => row.map(printable));
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  // Text columns (the first `textColumns`) read left-aligned, numbers right-aligned.
  return rows.map(
    (row) => indent + row.map((cell, i) => (i < textColumns ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  ').trimEnd(),
  );
}

/** SPEC §4.10: the sum over priced breaks, then the count of unpriced ones; an unknown price is never $0.00. */
export function cost(amount: number | null, unpriced: number): string {
  if (amount === null) return `unknown (${count(unpriced)} unpriced)`;
  return unpriced > 0 ? `${usd(amount)} + ${count(unpriced)} unpriced` : usd(amount);
}

