// Fuzzing at CI scale: a few thousand random and mutated inputs per decoder,
// plus every input that ever failed. The full run is `npm run fuzz`.
import { describe, expect, it } from 'vitest';
import { check, fuzz, regressions } from './fuzz.js';
import { targets } from './targets.js';

describe.each((await targets()).map((t) => [t.name, t] as const))('fuzzing %s', (_name, target) => {
  it('answers every input with a result or a clear rejection, quickly', () => {
    const report = fuzz(target, 3_000, 20261130);
    expect(report.failures.map((f) => f.problem)).toEqual([]);
  });

  it('still handles every input that once failed', () => {
    for (const input of regressions(target.name)) expect(check(target, input).problem).toBeUndefined();
  });
});
