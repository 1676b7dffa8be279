// HTML building for the web UI: every interpolated value escaped, numbers
// formatted the way people read them.
import { storedIso } from '../../time.js';

export function escape(value: unknown): string {
  return String(value).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** Template literal that escapes every value unless it is already Html. */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0]!;
  values.forEach((value, i) => {
    const text = Array.isArray(value) ? value.map((v) => (v instanceof Html ? v.text : escape(v))).join('') : value instanceof Html ? value.text : escape(value);
    out += text + strings[i + 1]!;
  });
  return new Html(out);
}

export const count = (n: number) => n.toLocaleString('en-US');
export const percent = (rate: number | null) => (rate === null ? 'no data' : `${(rate * 100).toFixed(1)} %`);
export const usd = (amount: number) => `$${amount.toFixed(amount >= 1 ? 2 : 4)}`;

/**
 * What breaks cost (SPEC §4.10): the sum over priced breaks, then the count
 * of unpriced ones — "$1.23 + 3 unpriced", "unknown (3 unpriced)"; an unknown
 * price is never shown as $0.
 */
export function cost(amount: number | null, unpriced = 0): string {
  if (amount === null) return unpriced > 0 ? `unknown (${count(unpriced)} unpriced)` : 'unknown price';
  return unpriced > 0 ? `${usd(amount)} + ${count(unpriced)} unpriced` : usd(amount);
}
/** A name (model, agent, tool, reason; a date) that wraps only between names, never inside one. */
export const unbroken = (text: string) => html`<span class="nm">${text}</span>`;
/** A name (snake_case, kebab-case, a path, an id) that wraps after its underscores, hyphens, slashes and commas, never inside a part. */
export function wrappable(name: string): Html {
  return html`<span class="wrap">${name.split(/(?<=[_/,-])/).map((part, i) => html`${i > 0 ? new Html('<wbr>') : ''}${part}`)}</span>`;
}
/** Names separated by commas, each wrapping only between its parts. */
export const nameList = (names: readonly string[]) => html`${names.map((name, i) => html`${i > 0 ? ', ' : ''}${wrappable(name)}`)}`;
/** A time in a table cell: the date and the time of day each kept whole. */
export const when = (ms: number) => html`${unbroken(utc(ms).slice(0, 10))} ${unbroken(utc(ms).slice(11))}`;
export const utc = (ms: number) => `${(storedIso(ms) ?? '(no time)').slice(0, 19).replace('T', ' ')} UTC`;

/** Data for a page's script, in a <script type="application/json">: no "<" can end the element early. */
export function jsonData(id: string, value: unknown): Html {
  return html`<script type="application/json" id="${id}">${new Html(JSON.stringify(value).replace(/</g, '\\u003c'))}</script>`;
}

/** "4m 10s", "2h 5m", "3d 1h": the largest two units. */
export function duration(ms: number): string {
  const units: [string, number][] = [['d', 86_400_000], ['h', 3_600_000], ['m', 60_000], ['s', 1000]];
  const parts: string[] = [];
  let rest = Math.round(ms);
  for (const [unit, size] of units) {
    if (rest >= size || (unit === 's' && parts.length === 0)) {
      parts.push(`${Math.floor(rest / size)}${unit}`);
      rest %= size;
    }
    if (parts.length === 2) break;
  }
  return parts.join(' ');
}
