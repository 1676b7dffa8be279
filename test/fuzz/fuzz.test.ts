// Fuzzing at CI scale: a few thousand random and mutated inputs per decoder
// (a few hundred through to the store and the reads),
// plus every input that ever failed (test/fixtures/fuzz/<target>/). The full
// run is `npm run fuzz`. Inputs run in a worker thread that is stopped when
// one runs past INPUT_BUDGET_MS, so a hang fails the test instead of blocking
// it; the harness tests below prove that with targets that misbehave on
// purpose (worker.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fuzz, Fuzzer, INPUT_BUDGET_MS, keepRegression, regressions, strayRegressions } from './fuzz.js';
import { targets } from './targets.js';

const TARGETS = await targets();

let fuzzer: Fuzzer;
beforeAll(async () => {
  fuzzer = await Fuzzer.start();
});
afterAll(async () => {
  await fuzzer?.close();
});

describe('the fuzz harness', () => {
  it('keeps regressions only as <target>/<hash>.bin: every file under test/fixtures/fuzz/ is replayed', () => {
    expect(strayRegressions(new Set(TARGETS.map((t) => t.name)))).toEqual([]);
  });

  it('fuzzes the POST /v1/breaks/external body among the decoders, and events through to the store and the reads', () => {
    expect(TARGETS.map((t) => t.name)).toContain('external-breaks-json');
    expect(TARGETS.map((t) => t.name)).toContain('events-store');
  });

  it('stops an input that hangs (a loop, a promise that never settles) at the bound, reports it, and goes on with the next', { timeout: 30_000 + 2 * INPUT_BUDGET_MS }, async () => {
    const inputs = ['ok', 'crash', 'ok', 'hang', 'ok', 'hang-async', 'ok', 'exit', 'ok'].map((s) => Buffer.from(s));
    const start = performance.now();
    const { failures } = await fuzzer.run('harness-misbehaving', inputs);
    expect(failures.map((f) => [f.input.toString(), f.problem])).toEqual([
      ['crash', "TypeError: Cannot read properties of undefined (reading 'x')"],
      ['hang', `no answer within ${INPUT_BUDGET_MS} ms: stopped`],
      ['hang-async', `no answer within ${INPUT_BUDGET_MS} ms: stopped`],
      ['exit', 'the worker exited with code 3'],
    ]);
    // Three new workers, each a few hundred ms to start, and the bound twice: far from blocking.
    expect(performance.now() - start).toBeLessThan(15_000 + 2 * INPUT_BUDGET_MS);
    // The worker that replaced the last one runs the decoders below.
  });
});

describe.each(TARGETS.map((t) => [t.name, t] as const))('fuzzing %s', (_name, target) => {
  it('answers every input with a result or a clear rejection, each within the time bound', async () => {
    const inputs = target.ciInputs ?? 3_000;
    const report = await fuzz(fuzzer, target, inputs, 20261130);
    expect(report.inputs).toBe(inputs);
    // A failure found here is kept like one found by `npm run fuzz`: the next run replays it.
    expect(report.failures.map((f) => `${f.problem} (kept as ${keepRegression(target.name, f.input)})`)).toEqual([]);
    expect(report.slowestMs).toBeLessThanOrEqual(INPUT_BUDGET_MS);
  });

  it('still handles every input that once failed', async () => {
    const kept = regressions(target.name);
    const { failures } = await fuzzer.run(target.name, kept.map((k) => k.input));
    expect(failures.map((f) => `${kept.find((k) => k.input === f.input)!.file}: ${f.problem}`)).toEqual([]);
  });
});
