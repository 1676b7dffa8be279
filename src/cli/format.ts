// Numbers as the terminal summaries print them.

export function count(n: number): string {
  return n.toLocaleString('en-US');
}

/** "1 file", "3 files"; `many` for irregular plurals. */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${count(n)} ${n === 1 ? one : many}`;
}

/** A cache rate; null is "no data", never 0%. */
export function percent(rate: number | null): string {
  return rate === null ? 'no data' : `${(rate * 100).toFixed(1)}%`;
}

/** Cents; under a cent, to the hundredth of a cent, so that a small figure does not read as $0.00. */
export function usd(amount: number): string {
  return `$${amount.toFixed(amount !== 0 && Math.abs(amount) < 0.01 ? 4 : 2)}`;
}
