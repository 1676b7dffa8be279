// A small benchmark harness: every figure is printed next to a baseline
// measured in the same run on the same data.
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

export function printRows(rows: Row[]): void {
  const lines = rows.map((r) => [
    r.figure,
    `${format(r.value)} ${r.unit}`,
    r.baseline ? `${format(r.baseline.value)} ${r.unit} (${r.baseline.label})` : '—',
    r.baseline ? `${(r.value / r.baseline.value).toFixed(2)}×` : '—',
    r.aim ?? '—',
  ]);
  const header = ['figure', 'value', 'baseline in the same run', 'ratio', 'aim'];
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)));
  const fmt = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ');
  console.log(fmt(header));
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

export function writeResults(path: string, rows: Row[], extra: Record<string, unknown> = {}): void {
  writeFileSync(path, JSON.stringify({ date: new Date().toISOString(), machine: machine(), ...extra, rows }, null, 2) + '\n');
}
