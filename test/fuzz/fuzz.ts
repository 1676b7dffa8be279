// Runs fuzz inputs through a target and records what failed: an unclear
// error, a crash, or an input that took too long.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { hashString } from '../../src/core/hash.js';
import { fuzzInput, Random } from './mutate.js';
import type { FuzzTarget } from './targets.js';

/** No input may take longer than this to decode. */
export const INPUT_BUDGET_MS = 250;

export const REGRESSIONS = fileURLToPath(new URL('../fixtures/fuzz/', import.meta.url));

export interface Failure {
  input: Buffer;
  problem: string;
}

export interface FuzzReport {
  target: string;
  inputs: number;
  failures: Failure[];
  slowestMs: number;
}

/** One input: undefined when the target behaved. */
export function check(target: FuzzTarget, input: Buffer): { problem?: string; ms: number } {
  const start = performance.now();
  try {
    target.run(input);
  } catch (error) {
    return { problem: `${(error as Error).name}: ${(error as Error).message}`.slice(0, 300), ms: performance.now() - start };
  }
  const ms = performance.now() - start;
  return ms > INPUT_BUDGET_MS ? { problem: `took ${ms.toFixed(0)} ms`, ms } : { ms };
}

export function fuzz(target: FuzzTarget, inputs: number, seed: number): FuzzReport {
  const random = new Random(seed);
  const report: FuzzReport = { target: target.name, inputs, failures: [], slowestMs: 0 };
  for (let i = 0; i < inputs; i++) {
    const input = fuzzInput(target.corpus, random, target.json);
    const { problem, ms } = check(target, input);
    report.slowestMs = Math.max(report.slowestMs, ms);
    if (problem) report.failures.push({ input, problem });
  }
  return report;
}

/** Every input that ever failed is kept, named by its hash, and replayed by the tests. */
export function keepRegression(target: string, input: Buffer): string {
  const dir = join(REGRESSIONS, target);
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${hashString(input.toString('latin1'))}.bin`);
  writeFileSync(file, input);
  return file;
}

export function regressions(target: string): Buffer[] {
  const dir = join(REGRESSIONS, target);
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith('.bin'))
    .map((f) => readFileSync(join(dir, f)));
}
