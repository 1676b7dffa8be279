// A small benchmark harness: every figure is printed next to a baseline
// measured in the same run on the same data.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import os from 'node:os';

export interface Row {
  figure: string;
  value: number;
  unit: string;
  baseline?: { label: string; value: number };
  aim?: string;
}

/** Runs `fn` (which does `units` units of work) until `minMs` has passed; returns units per second. */
export function throughput(fn: () => void, units: number, minMs = 1000): number {
  fn(); // warm-up
  let done = 0;
  const start = performance.now();
  let elapsed = 0;
  while (elapsed < minMs) {
    fn();
    done += units;
    elapsed = performance.now() - start;
  }
  return (done * 1000) / elapsed;
}

export function percentile(samples: number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

function format(value: number): string {
  if (value >= 100) return Math.round(value).toLocaleString('en-US');
  return value.toFixed(value >= 10 ? 1 : 2);
}

const HEADER = ['figure', 'value', 'baseline in the same run', 'ratio', 'aim'];

function cells(r: Row): string[] {
  return [
    r.figure,
    `${format(r.value)} ${r.unit}`,
    r.baseline ? `${format(r.baseline.value)} ${r.unit} (${r.baseline.label})` : '—',
    r.baseline ? `${(r.value / r.baseline.value).toFixed(2)}×` : '—',
    r.aim ?? '—',
  ];
}

/** The rows as a Markdown table, for docs/performance.md. */
export function markdownTable(rows: readonly Row[]): string {
  const line = (c: string[]) => `| ${c.map((cell) => cell.replaceAll('|', '\\|')).join(' | ')} |`;
  return [line(HEADER), line(HEADER.map(() => '---')), ...rows.map((r) => line(cells(r)))].join('\n');
}

export function printRows(rows: Row[]): void {
  const lines = rows.map(cells);
  const widths = HEADER.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)));
  const fmt = (line: string[]) => line.map((c, i) => c.padEnd(widths[i]!)).join(' | ');
  console.log(fmt(HEADER));
  console.log(widths.map((w) => '-'.repeat(w)).join('-|-'));
  for (const l of lines) console.log(fmt(l));
}

export function machine() {
  return {
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model ?? 'unknown',
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
  };
}

/** The commit measured, marked when the work tree had uncommitted changes. */
function commit(): string {
  const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
  const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { encoding: 'utf8' }).trim() !== '';
  return dirty ? `${head} with uncommitted changes` : head;
}

export interface Results {
  date: string;
  commit: string;
  machine: ReturnType<typeof machine>;
  sizes: number[];
  rows: Row[];
}

export function writeResults(path: string, rows: Row[], sizes: number[]): void {
  const results: Results = { date: new Date().toISOString(), commit: commit(), machine: machine(), sizes, rows };
  writeFileSync(path, JSON.stringify(results, null, 2) + '\n');
}
